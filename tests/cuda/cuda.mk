# cuda.mk -- builds the self-checking CUDA test programs tests/cuda/X.cu into $(BUILD)/cuda/X.
#
# The programs use only the CUDA runtime API (no kernels) and link the shared
# runtime (-cudart shared, from NVCCFLAGS) so that the shim can be preloaded in
# its place. ptds.cu is built with per-thread default streams so that it calls
# the *_ptds/*_ptsz entry points. Host code warnings are errors.

CUDA_TEST_NAMES := device memory copy stream event errors threads ptds copyloop meminfo hog roundtrips
CUDA_TEST_PROGS := $(addprefix $(BUILD)/cuda/,$(CUDA_TEST_NAMES))
CUDA_TEST_WARN  := -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror

$(BUILD)/cuda:
	mkdir -p $@

$(BUILD)/cuda/ptds: CUDA_TEST_EXTRA := --default-stream per-thread

$(BUILD)/cuda/%: tests/cuda/%.cu tests/cuda/cuda_check.h | $(BUILD)/cuda
	$(NVCC) $(NVCCFLAGS) $(CUDA_TEST_WARN) $(CUDA_TEST_EXTRA) -std=c++17 -o $@ $<
