# gpu.mk -- the GPU run (tools/gpu-check.sh): the bundle it runs from on a GPU machine
# that builds nothing, the run itself, and its dry run on this machine.
#
#   make gpu-bundle      build/gpu-bundle.tar.xz: programs, suites and Debian libraries
#   make gpu-check       the run, on a GPU machine (GPU_CHECK_ARGS: e.g. --unlimited)
#   make gpu-check-dry   the same run without a GPU, from the bundle (part of make test)

GPU_BUNDLE := $(BUILD)/gpu-bundle.tar.xz
GPU_CHECK_ARGS ?=

.PHONY: gpu-bundle gpu-check gpu-check-dry
gpu-bundle: all test-programs bench-programs
	tools/gpu-bundle.sh $(BUILD) $(GPU_BUNDLE)

gpu-check:
	tools/gpu-check.sh $(GPU_CHECK_ARGS)

# The frameworks' environment unless the build goes without it (FRAMEWORK_TESTS=0:
# then the phases that need it say SKIP).
gpu-check-dry: gpu-bundle $(if $(filter 0,$(FRAMEWORK_TESTS)),,pyenv)
	py='$(PYENV_DIR)/bin/python'; [ -x "$$py" ] || py=$(PYTHON); tools/gpu-check-dry.sh $(GPU_BUNDLE) "$$py"
