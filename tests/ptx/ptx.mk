# ptx.mk -- the PTX engine's unit test: the kernels of tests/ptx/ptx_kernels.cu,
# compiled to PTX by nvcc, run by the engine's objects (server/emu/ptx/) on host
# buffers and compared with CPU references.

PTX_TEST        := $(BUILD)/tests/check_ptx
PTX_KERNELS_PTX := $(BUILD)/tests/ptx_kernels.ptx
PTX_ENGINE_OBJS := $(patsubst server/emu/%.c,$(BUILD)/obj/emu/%.o,$(wildcard server/emu/ptx/*.c))
UNIT_TESTS      += $(PTX_TEST)

$(PTX_KERNELS_PTX): tests/ptx/ptx_kernels.cu | $(BUILD)/tests
	$(NVCC) -ptx -arch=sm_90 -o $@ $<

# The module's variables (printf's strings) come from common/crm_ptx.c's reading of
# the PTX, as on the emulated device.
$(PTX_TEST): tests/ptx/check_ptx.c tests/unit/crm_check.h $(PTX_ENGINE_OBJS) $(KERNEL_PARSER_OBJS) \
             $(PTX_KERNELS_PTX) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -DPTX_KERNELS='"$(abspath $(PTX_KERNELS_PTX))"' -o $@ $< \
	    $(PTX_ENGINE_OBJS) $(KERNEL_PARSER_OBJS) $(LDFLAGS) $(KERNEL_LIBS) $(CHECK_LIBS) -lm

# `make fuzz-ptx FUZZ_SECONDS=N`: the PTX fuzzer (tests/ptx/fuzz_ptx.c), built with
# clang's libFuzzer, ASan and UBSan into $(BUILD)/fuzz, run from the PTX of the
# engine's test kernels and benchmarks; findings land in $(BUILD)/fuzz/findings.
FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_FLAGS   := -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=address,undefined -I. -I$(GEN) -I$(CUDA_HOME)/include
FUZZ_PTX_SRC := tests/ptx/fuzz_ptx.c $(wildcard server/emu/ptx/*.c) common/crm_ptx.c common/crm_fatbin.c \
                common/crm_cubin.c common/crm_image.c

$(FUZZ_DIR)/fuzz_ptx: $(FUZZ_PTX_SRC) $(wildcard server/emu/ptx/*.h) common/crm_fatbin.h
	mkdir -p $(FUZZ_DIR)
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $(FUZZ_PTX_SRC) -lzstd -llz4 -lm -lpthread

.PHONY: fuzz-ptx
fuzz-ptx: $(FUZZ_DIR)/fuzz_ptx $(PTX_KERNELS_PTX) $(BENCH_BIN)/bench_ptx_kernels.ptx
	mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds $(FUZZ_DIR)/findings
	cp $(PTX_KERNELS_PTX) $(BENCH_BIN)/bench_ptx_kernels.ptx $(FUZZ_DIR)/seeds/
	CUDAREM_EMU_THREADS=1 CUDAREM_EMU_KERNEL_TIMEOUT=0.05 $(FUZZ_DIR)/fuzz_ptx -max_total_time=$(FUZZ_SECONDS) \
	    -max_len=20000 -timeout=10 -artifact_prefix=$(FUZZ_DIR)/findings/ $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds
