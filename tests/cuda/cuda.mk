# cuda.mk -- builds the self-checking CUDA test programs tests/cuda/X.cu into
# $(BUILD)/cuda/X (shared runtime) and, for those the suites run that way, into
# $(BUILD)/cuda-static/X (static runtime); see TEST_RUNTIMES in tests/tests.mk.
#
# The programs use only the CUDA runtime API (no kernels); holdout.cu adds cuBLAS. ptds.cu is built with
# per-thread default streams so that it calls the *_ptds/*_ptsz entry points.

CUDA_TEST_NAMES   := device memory copy pinned stream event errors threads ptds copyloop meminfo hog roundtrips holdout pool \
                     nodevice
CUDA_STATIC_NAMES := device memory copy pinned stream event errors threads ptds meminfo roundtrips holdout pool nodevice
CUDA_TEST_PROGS   := $(addprefix $(call test_dir,cuda,shared)/,$(CUDA_TEST_NAMES)) \
                     $(addprefix $(call test_dir,cuda,static)/,$(CUDA_STATIC_NAMES))

$(foreach rt,$(TEST_RUNTIMES),$(call test_dir,cuda,$(rt))/ptds): CUDA_TEST_EXTRA := --default-stream per-thread
$(foreach rt,$(TEST_RUNTIMES),$(call test_dir,cuda,$(rt))/holdout): CUDA_TEST_EXTRA := -lcublas

# $(1): the directory, $(2): the runtime; one pattern rule per directory.
define CUDA_TEST_RULES
$(1):
	mkdir -p $$@
$(1)/%: tests/cuda/%.cu tests/cuda/cuda_check.h | $(1)
	$$(call TEST_NVCC,$(2)) $$(CUDA_TEST_EXTRA) -o $$@ $$<
endef
$(foreach rt,$(TEST_RUNTIMES),$(eval $(call CUDA_TEST_RULES,$(call test_dir,cuda,$(rt)),$(rt))))
