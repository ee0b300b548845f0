# python.mk -- the framework suite: tests/python/{nvml,cupy,numba,torch}_basic.py run
# through the shim against the emulated device by tests/e2e/check_e2e_frameworks,
# in the virtual environment of tools/python-env.sh (outside the tree).
#
# FRAMEWORK_TESTS says whether `make test` runs it:
#   1 (default)  all four
#   0            no (a machine without the 6 GB environment); every `make test-once`
#                prints a NOT RUN line saying so
#   NAMES        those named, e.g. FRAMEWORK_TESTS="nvml cupy"
# The suite binary is always built. `make test-frameworks` runs it whatever the
# variable says (all four when it is 0). Running it first brings the environment
# up to date (tools/python-env.sh: ~0.3 s when complete, ~3 min and 6 GB when not).
# In the ASan flavour the scripts run with libasan preloaded, like every e2e program.

FRAMEWORK_TESTS ?= 1
FRAMEWORK_NAMES := nvml cupy numba torch
FRAMEWORK_CHECK := $(BUILD)/tests/check_e2e_frameworks
PYENV_DIR       := $(shell tools/python-env.sh --print-dir 2>/dev/null)

$(FRAMEWORK_CHECK): E2E_DEFS += -DE2E_PYENV='"$(PYENV_DIR)"'
test-programs: $(FRAMEWORK_CHECK)

.PHONY: pyenv test-frameworks
pyenv:
	tools/python-env.sh

test-frameworks: all test-programs pyenv
	CRM_FRAMEWORKS='$(if $(filter 0 1,$(FRAMEWORK_TESTS)),$(FRAMEWORK_NAMES),$(FRAMEWORK_TESTS))' \
		tests/run-tests.sh $(FRAMEWORK_CHECK)

ifeq ($(FRAMEWORK_TESTS),0)
TESTS_NOT_RUN += framework suite ($(FRAMEWORK_NAMES) through the shim): FRAMEWORK_TESTS=0; \
                 `make test-frameworks` runs it.
else
E2E_TESTS  += $(FRAMEWORK_CHECK)
TEST_SETUP += pyenv
export CRM_FRAMEWORKS := $(if $(filter 1,$(FRAMEWORK_TESTS)),$(FRAMEWORK_NAMES),$(FRAMEWORK_TESTS))
endif
