# train.mk -- the end-to-end suite of examples/train.py (a CNN trained on the digits
# through the shim, cuBLAS and cuDNN remoted to the emulated device). It runs
# Python with numpy and scikit-learn (tools/install-deps.sh installs them) and
# reuses the e2e harness and its build-time definitions (tests/e2e/e2e.mk).
# TRAIN_PYTHON is the interpreter itself rather than a launcher (a pyenv shim is
# a shell script whose helper processes would all run under the preloaded shim).

TRAIN_TEST   := $(BUILD)/tests/check_e2e_train
TRAIN_PYTHON := $(or $(shell $(PYTHON) -c 'import sys; print(sys.executable)' 2>/dev/null),$(PYTHON))

E2E_TESTS += $(TRAIN_TEST)

$(TRAIN_TEST): tests/train/check_e2e_train.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
		tests/unit/crm_check.h tests/train/train.mk | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -DTRAIN_PYTHON='"$(TRAIN_PYTHON)"' -o $@ $< \
	    $(E2E_HARNESS) $(LDFLAGS) $(CHECK_LIBS)
