# fuzz.mk -- libFuzzer harnesses over what a client can send a server: the PTX
# text of a module (fuzz_ptx: the module readers, the PTX engine's parser and the
# engine) and device-code images (fuzz_image: image checks, fatbinary entries
# and their zstd/LZ4 payloads, cubin module info). Built with clang's libFuzzer,
# ASan and UBSan into $(BUILD)/fuzz; `make fuzz FUZZ_SECONDS=N` runs each for N
# seconds from its seeds, `make fuzz-ptx` / `make fuzz-image` one; findings land
# in $(BUILD)/fuzz/findings (a crash fails the target).

FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=fuzzer,address,undefined -I. -I$(GEN) -I$(CUDA_HOME)/include
FUZZ_PARSERS := common/crm_ptx.c common/crm_fatbin.c common/crm_cubin.c common/crm_image.c
FUZZ_RUN_ENV := CUDAREM_EMU_THREADS=1 CUDAREM_EMU_KERNEL_TIMEOUT=0.05

$(FUZZ_DIR)/fuzz_ptx: tests/fuzz/fuzz_ptx.c $(wildcard server/emu/ptx/*.[ch]) $(FUZZ_PARSERS) common/crm_fatbin.h
	mkdir -p $(FUZZ_DIR)
	clang $(FUZZ_CFLAGS) -o $@ $< $(wildcard server/emu/ptx/*.c) $(FUZZ_PARSERS) -lzstd -llz4 -lm -lpthread

$(FUZZ_DIR)/fuzz_image: tests/fuzz/fuzz_image.c $(FUZZ_PARSERS) common/crm_fatbin.h common/crm_image.h
	mkdir -p $(FUZZ_DIR)
	clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_PARSERS) -lzstd -llz4

# $(1): the harness, $(2): its seed files.
define FUZZ_RUN
	mkdir -p $(FUZZ_DIR)/$(1)-corpus $(FUZZ_DIR)/$(1)-seeds $(FUZZ_DIR)/findings
	cp $(2) $(FUZZ_DIR)/$(1)-seeds/
	$(FUZZ_RUN_ENV) $(FUZZ_DIR)/$(1) -max_total_time=$(FUZZ_SECONDS) -max_len=200000 -timeout=10 \
	    -rss_limit_mb=4096 -artifact_prefix=$(FUZZ_DIR)/findings/ $(FUZZ_DIR)/$(1)-corpus $(FUZZ_DIR)/$(1)-seeds
endef

.PHONY: fuzz fuzz-ptx fuzz-image
fuzz: fuzz-ptx fuzz-image

fuzz-ptx: $(FUZZ_DIR)/fuzz_ptx $(PTX_KERNELS_PTX) $(BENCH_BIN)/bench_ptx_kernels.ptx
	$(call FUZZ_RUN,fuzz_ptx,$(PTX_KERNELS_PTX) $(BENCH_BIN)/bench_ptx_kernels.ptx)

fuzz-image: $(FUZZ_DIR)/fuzz_image $(KTEST_FATBINS)
	$(call FUZZ_RUN,fuzz_image,$(KTEST_FATBINS))
