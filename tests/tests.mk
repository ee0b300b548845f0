# tests.mk -- test binaries and the `make test` target.
#
# Each module's .mk appends Check binaries to UNIT_TESTS (pure logic) or E2E_TESTS
# (start a real server on loopback); tests/cuda/cuda.mk builds the nvcc programs
# the end-to-end suites run through the shim.

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)

$(BUILD)/tests:
	mkdir -p $@

# The nvcc-built test programs are built twice, one directory per runtime: with the
# shared runtime into $(BUILD)/AREA (the shim, preloaded, takes its place) and with
# nvcc's default static runtime into $(BUILD)/AREA-static (the runtime inside the
# program dlopens libcuda.so.1 and gets the shim's driver layer). The suites run both.
TEST_RUNTIMES := shared static
# Directory of area $(1)'s programs linked with runtime $(2).
test_dir = $(BUILD)/$(1)$(if $(filter static,$(2)),-static)
# The test programs' nvcc, linking runtime $(1); host code warnings are errors.
TEST_NVCC = $(call nvcc_rt,$(1)) -std=c++17 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror

# The end-to-end harness (tests/e2e/e2e_harness.h), which suites of every area link:
# defined before the areas' rules, whose prerequisites expand at once. It learns at
# compile time the absolute build directory, whether this is the sanitizer flavour
# (then libasan is preloaded ahead of the shim) and where libasan lives.
E2E_HARNESS  := tests/e2e/e2e_harness.c
# In the ThreadSanitizer flavour (SAN=thread) the client side is instrumented, the
# programs run with libtsan preloaded first, and the server is the plain build's.
E2E_DEFS     := -DE2E_BUILD_DIR='"$(abspath $(BUILD))"' -DE2E_SAN=$(if $(filter 1,$(SAN)),1,0) \
                -DE2E_ASAN_LIB='"$(shell $(CC) -print-file-name=libasan.so)"' \
                -DE2E_TSAN=$(if $(filter thread,$(SAN)),1,0) -DE2E_TSAN_LIB='"$(shell $(CC) -print-file-name=libtsan.so)"' \
                -DE2E_SERVER_DIR='"$(abspath $(if $(filter thread,$(SAN)),build,$(BUILD)))"' \
                -DE2E_SOURCE_DIR='"$(abspath .)"' -DE2E_PYTHON='"$(shell command -v $(PYTHON))"'

# Every tests/<area>/<area>.mk: each appends its own binaries.
include $(sort $(wildcard tests/*/*.mk))

.PHONY: test test-unit test-e2e test-once
test-programs: $(UNIT_TESTS) $(E2E_TESTS) $(CUDA_TEST_PROGS)

# One pass over every suite in this build flavour. TEST_SETUP: targets the suites
# need first; TESTS_NOT_RUN: suites left out on purpose, which run-tests.sh names
# in a NOT RUN line beside its summary (never a silent skip).
test-once: all test-programs $(TEST_SETUP)
	CRM_TESTS_NOT_RUN='$(strip $(TESTS_NOT_RUN))' tests/run-tests.sh $(UNIT_TESTS) $(E2E_TESTS)

test-unit: $(UNIT_TESTS)
	tests/run-tests.sh $(UNIT_TESTS)

test-e2e: all test-programs $(TEST_SETUP)
	CRM_TESTS_NOT_RUN='$(strip $(TESTS_NOT_RUN))' tests/run-tests.sh $(E2E_TESTS)

# The ThreadSanitizer flavour (make SAN=thread test-tsan): the shim and what it links
# built with -fsanitize=thread, run on the stress suite (many client threads)
# against the plain build's server (built first), and on the unit suites of the
# client's code that runs on several threads (pointer table, deferred failures,
# data channel, socket reads, compression). A race report fails the program.
TSAN_SUITES := $(addprefix $(BUILD)/tests/,check_ptrmap check_deferred check_chan check_sockio check_codec \
                 check_zlive check_e2e_stress)
.PHONY: test-tsan
test-tsan: $(SHIM) $(SHIM_ALIASES) $(SHIM_LOADER_STUBS) $(TSAN_SUITES)
	$(MAKE) SAN=0 $(abspath build)/cudarem-server
	tests/run-tests.sh $(TSAN_SUITES)

# README and docs/ against the tree: links, commands' options, variables.
.PHONY: check-docs
check-docs: $(SERVER) $(SMI)
	$(PYTHON) tools/check-docs.py $(BUILD)

# The README's test command: the docs' check, the plain build, then the GPU run rehearsed without a
# GPU from its bundle (tools/gpu.mk), the same suites under ASan/UBSan, the threaded
# suites under ThreadSanitizer, then a short fixed-seed pass of the fuzzers
# (tests/fuzz/fuzz.mk).
test:
	$(MAKE) SAN=0 check-docs
	$(MAKE) SAN=0 test-once
	$(MAKE) SAN=0 gpu-check-dry
	$(MAKE) SAN=1 test-once
	$(MAKE) SAN=thread test-tsan
	$(MAKE) SAN=0 fuzz-ci
