# e2e.mk -- end-to-end Check suites: a real cudarem-server (emulated device) on
# loopback, the tests/cuda programs run through the preloaded shim.
#
# The harness learns where the binaries are at compile time: the absolute build
# directory, whether this is the sanitizer flavour (then libasan is preloaded
# ahead of the shim) and where libasan lives.

E2E_NAMES    := check_e2e_programs check_e2e_faults check_e2e_roundtrips
E2E_HARNESS  := tests/e2e/e2e_harness.c
E2E_DEFS     := -DE2E_BUILD_DIR='"$(abspath $(BUILD))"' -DE2E_SAN=$(SAN) \
                -DE2E_ASAN_LIB='"$(shell $(CC) -print-file-name=libasan.so)"' \
                -DE2E_SOURCE_DIR='"$(abspath .)"' -DE2E_PYTHON='"$(shell command -v $(PYTHON))"'

E2E_TESTS += $(addprefix $(BUILD)/tests/,$(E2E_NAMES))

$(BUILD)/tests/check_e2e_%: tests/e2e/check_e2e_%.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
		tests/unit/crm_check.h tests/e2e/e2e.mk | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -o $@ $< $(E2E_HARNESS) $(LDFLAGS) $(CHECK_LIBS)
