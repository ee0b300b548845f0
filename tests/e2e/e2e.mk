# e2e.mk -- end-to-end Check suites: a real cudarem-server (emulated device) on
# loopback, the tests/cuda programs run through the preloaded shim; check_e2e_auth
# starts servers that admit by token or uid; check_e2e_smi runs cudarem-smi, the
# metrics and the dashboard; check_e2e_install runs make install and what it wrote;
# check_e2e_pool pools two servers; check_e2e_hostile, strangers on the network, and
# check_e2e_limits, a tenant flooding the server with objects; check_e2e_unusable, every way a server cannot be
# used, as each build and framework sees it.
# The harness and its compile-time definitions are in tests/tests.mk.

E2E_NAMES    := check_e2e_programs check_e2e_faults check_e2e_roundtrips check_e2e_auth check_e2e_netns check_e2e_tls \
                check_e2e_smi check_e2e_install check_e2e_pool check_e2e_hostile check_e2e_limits

E2E_TESTS += $(addprefix $(BUILD)/tests/,$(E2E_NAMES))

$(BUILD)/tests/check_e2e_%: tests/e2e/check_e2e_%.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
		tests/unit/crm_check.h tests/e2e/e2e.mk | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -o $@ $< $(E2E_HARNESS) $(LDFLAGS) $(CHECK_LIBS)

$(BUILD)/tests/check_e2e_smi: $(SMI)
$(BUILD)/tests/check_e2e_smi: E2E_DEFS += -DE2E_PYENV='"$(PYENV_DIR)"'
$(BUILD)/tests/check_e2e_install: E2E_DEFS += -DE2E_PYENV='"$(PYENV_DIR)"'
$(BUILD)/tests/check_e2e_pool: E2E_DEFS += -DE2E_PYENV='"$(PYENV_DIR)"'

# A server that cannot be used, every way (check_e2e_unusable): its fake server of
# another protocol speaks RPC with the protocol's XDR.
$(BUILD)/tests/check_e2e_unusable: tests/e2e/check_e2e_unusable.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
		tests/unit/crm_check.h tests/e2e/e2e.mk $(PROTO_OBJS) $(UTIL_OBJS) $(GEN_HEADERS) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -DE2E_PYENV='"$(PYENV_DIR)"' -o $@ $< $(E2E_HARNESS) \
	    $(PROTO_OBJS) $(UTIL_OBJS) $(LDFLAGS) $(CHECK_LIBS) -ltirpc
E2E_TESTS += $(BUILD)/tests/check_e2e_unusable
