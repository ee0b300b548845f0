# fuzz.mk -- libFuzzer harnesses over what a client can send a server: the byte
# stream of a session's connection, served by the server's own session code on the
# emulated device (fuzz_request: RPC framing, XDR decoding, dispatch, handlers), the
# data channel's frames and the payloads read through them (fuzz_chan), the
# PTX text of a module (fuzz_ptx: the module readers, the PTX engine's parser and
# the engine) and device-code images (fuzz_image: image checks, fatbinary entries
# and their zstd/LZ4 payloads, cubin module info). Built with clang's libFuzzer,
# ASan and UBSan into $(BUILD)/fuzz; `make fuzz FUZZ_SECONDS=N` runs each for N
# seconds from its seeds, `make fuzz-request` / `fuzz-chan` / `fuzz-ptx` / `fuzz-image` one;
# findings land in $(BUILD)/fuzz/findings (a crash fails the target). The request
# seeds are sessions recorded by record.py; posted.bin is memory.bin with two of its
# EXEC batches sent as CRM_POST.

FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I. -I$(GEN) -I$(CUDA_HOME)/include
FUZZ_PARSERS := common/crm_ptx.c common/crm_fatbin.c common/crm_cubin.c common/crm_image.c
FUZZ_RUN_ENV := CUDAREM_EMU_THREADS=1 CUDAREM_EMU_KERNEL_TIMEOUT=0.05 CUDAREM_EMU_LIB=$(abspath $(EMU_LIB))

# The server as a session process runs it, less main.c, and what it links.
FUZZ_SERVER  := $(filter-out server/main.c,$(wildcard server/*.c)) $(SERVER_GEN_SRCS) \
                $(filter-out protocol/gen_api.py,$(wildcard protocol/*.c)) $(GEN)/crm_api_xdr.c $(GEN)/crm_api_names.c \
                $(addprefix common/,crm_log.c crm_rangemap.c crm_idmap.c crm_addr.c crm_auth.c crm_digest.c) \
                $(FUZZ_PARSERS)
FUZZ_REQUEST_SEEDS := $(wildcard tests/fuzz/seeds/request/*)
FUZZ_CHAN_SRCS := protocol/crm_chan.c protocol/crm_payload.c protocol/crm_zlive.c protocol/crm_zshape.c protocol/crm_sockio.c protocol/crm_bulk.c \
                  protocol/crm_tls.c
FUZZ_CHAN_SEEDS := $(wildcard tests/fuzz/seeds/chan/*)

$(FUZZ_DIR)/fuzz_chan: tests/fuzz/fuzz_chan.c tests/fuzz/fuzz_feed.h $(FUZZ_CHAN_SRCS) protocol/crm_chan.h protocol/crm_payload.h
	mkdir -p $(FUZZ_DIR)
	clang $(FUZZ_CFLAGS) -I/usr/include/tirpc -pthread -o $@ $< $(FUZZ_CHAN_SRCS) -ltirpc -lzstd -lssl -lcrypto

$(FUZZ_DIR)/fuzz_request: tests/fuzz/fuzz_request.c tests/fuzz/fuzz_feed.h $(FUZZ_SERVER) $(wildcard server/*.h protocol/*.h common/*.h) \
                          $(GEN_HEADERS) | $(EMU_LIB)
	mkdir -p $(FUZZ_DIR)
	clang $(FUZZ_CFLAGS) -I/usr/include/tirpc -pthread -DCRM_CHAN_ACCEPT_MS=50 -o $@ $< $(FUZZ_SERVER) \
	    -ltirpc -ldl -lzstd -llz4 -lssl -lcrypto -lm

$(FUZZ_DIR)/fuzz_ptx: tests/fuzz/fuzz_ptx.c $(wildcard server/emu/ptx/*.[ch]) $(FUZZ_PARSERS) common/crm_fatbin.h
	mkdir -p $(FUZZ_DIR)
	clang $(FUZZ_CFLAGS) -o $@ $< $(wildcard server/emu/ptx/*.c) $(FUZZ_PARSERS) -lzstd -llz4 -lm -lpthread

$(FUZZ_DIR)/fuzz_image: tests/fuzz/fuzz_image.c $(FUZZ_PARSERS) common/crm_fatbin.h common/crm_image.h
	mkdir -p $(FUZZ_DIR)
	clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_PARSERS) -lzstd -llz4

# $(1): the harness, $(2): its seed files, copied where it reads them.
define FUZZ_SEEDS
	mkdir -p $(FUZZ_DIR)/$(1)-seeds $(FUZZ_DIR)/findings
	cp $(2) $(FUZZ_DIR)/$(1)-seeds/
endef

# $(1): the harness, $(2): its seed files.
define FUZZ_RUN
	$(call FUZZ_SEEDS,$(1),$(2))
	mkdir -p $(FUZZ_DIR)/$(1)-corpus
	$(FUZZ_RUN_ENV) $(FUZZ_DIR)/$(1) -max_total_time=$(FUZZ_SECONDS) -max_len=200000 -timeout=10 \
	    -rss_limit_mb=4096 -artifact_prefix=$(FUZZ_DIR)/findings/ $(FUZZ_DIR)/$(1)-corpus $(FUZZ_DIR)/$(1)-seeds
endef

# `make fuzz-ci`, the last pass of `make test`: each harness from a fresh corpus of
# its seeds for FUZZ_CI_RUNS inputs with a fixed seed, so a run repeats exactly.
FUZZ_CI_RUNS ?= 3000
define FUZZ_CI
	$(call FUZZ_SEEDS,$(1),$(2))
	rm -rf $(FUZZ_DIR)/$(1)-ci && mkdir -p $(FUZZ_DIR)/$(1)-ci
	$(FUZZ_RUN_ENV) $(FUZZ_DIR)/$(1) -seed=1 -runs=$(FUZZ_CI_RUNS) -max_len=200000 -timeout=10 \
	    -rss_limit_mb=4096 -artifact_prefix=$(FUZZ_DIR)/findings/ $(FUZZ_DIR)/$(1)-ci $(FUZZ_DIR)/$(1)-seeds \
	    > $(FUZZ_DIR)/$(1)-ci.log 2>&1; rc=$$?; grep -E "^#[0-9]+ +(INITED|DONE)|^Done" $(FUZZ_DIR)/$(1)-ci.log; \
	    [ $$rc -eq 0 ] || { tail -80 $(FUZZ_DIR)/$(1)-ci.log; echo "$(1): a finding (see $(FUZZ_DIR)/findings)"; exit 1; }
endef

.PHONY: fuzz fuzz-request fuzz-chan fuzz-ptx fuzz-image fuzz-ci
fuzz-ci: $(FUZZ_DIR)/fuzz_request $(FUZZ_DIR)/fuzz_chan $(FUZZ_DIR)/fuzz_ptx $(FUZZ_DIR)/fuzz_image $(EMU_LIB) $(PTX_KERNELS_PTX) \
         $(BENCH_BIN)/bench_ptx_kernels.ptx $(KTEST_FATBINS)
	$(call FUZZ_CI,fuzz_request,$(FUZZ_REQUEST_SEEDS))
	$(call FUZZ_CI,fuzz_chan,$(FUZZ_CHAN_SEEDS))
	$(call FUZZ_CI,fuzz_ptx,$(PTX_KERNELS_PTX) $(BENCH_BIN)/bench_ptx_kernels.ptx)
	$(call FUZZ_CI,fuzz_image,$(KTEST_FATBINS))

fuzz: fuzz-request fuzz-chan fuzz-ptx fuzz-image

fuzz-chan: $(FUZZ_DIR)/fuzz_chan
	$(call FUZZ_RUN,fuzz_chan,$(FUZZ_CHAN_SEEDS))

fuzz-request: $(FUZZ_DIR)/fuzz_request $(EMU_LIB)
	$(call FUZZ_RUN,fuzz_request,$(FUZZ_REQUEST_SEEDS))

fuzz-ptx: $(FUZZ_DIR)/fuzz_ptx $(PTX_KERNELS_PTX) $(BENCH_BIN)/bench_ptx_kernels.ptx
	$(call FUZZ_RUN,fuzz_ptx,$(PTX_KERNELS_PTX) $(BENCH_BIN)/bench_ptx_kernels.ptx)

fuzz-image: $(FUZZ_DIR)/fuzz_image $(KTEST_FATBINS)
	$(call FUZZ_RUN,fuzz_image,$(KTEST_FATBINS))
