# load.mk -- the server under load: tests/load/loadmix (a client running a checked
# mix of copies, memsets, cuBLAS GEMMs and kernel launches for a time), built with
# the shared runtime, and check_e2e_load (32 of them at once for 60 s). `make bench`
# runs loadmix too, for the latency figures under load.
LOAD_DIR  := $(BUILD)/load
LOAD_PROG := $(LOAD_DIR)/loadmix
E2E_TESTS += $(BUILD)/tests/check_e2e_load
test-programs: $(LOAD_PROG)

$(LOAD_DIR):
	mkdir -p $@

$(LOAD_PROG): tests/load/loadmix.cu | $(LOAD_DIR)
	$(call TEST_NVCC,shared) -o $@ $< -lcublas

$(BUILD)/tests/check_e2e_load: tests/load/check_e2e_load.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
                               tests/unit/crm_check.h | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -o $@ $< $(E2E_HARNESS) $(LDFLAGS) $(CHECK_LIBS)
