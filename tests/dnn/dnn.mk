# dnn.mk -- tests of the cuDNN remoting: the emulated cuDNN against reference code
# (check_dnn_emu links libcudarem-emu.so directly), and nvcc cuDNN programs run
# through the shim against a real server (check_e2e_dnn).

DNN_NAMES := dnn_net dnn_legacy dnn_bn_ex dnn_dropout dnn_st dnn_ctc dnn_norm
DNN_PROGS := $(foreach rt,$(TEST_RUNTIMES),$(foreach p,$(DNN_NAMES),$(call test_dir,dnn,$(rt))/$(p)))
UNIT_TESTS += $(BUILD)/tests/check_dnn_emu
E2E_TESTS += $(BUILD)/tests/check_e2e_dnn

test-programs: $(DNN_PROGS)

$(BUILD)/tests/check_dnn_emu: tests/dnn/check_dnn_emu.c tests/unit/crm_check.h $(EMU_LIB) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(LDFLAGS) -L$(BUILD) -l:libcudarem-emu.so \
	    -Wl,-rpath,'$$ORIGIN/..' $(CHECK_LIBS) -lm

$(BUILD)/tests/check_e2e_dnn: tests/dnn/check_e2e_dnn.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
		tests/unit/crm_check.h tests/dnn/dnn.mk $(DNN_PROGS) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -o $@ $< $(E2E_HARNESS) $(LDFLAGS) $(CHECK_LIBS)

# A cuDNN program as applications build one: -lcudnn (DT_NEEDED libcudnn.so.9,
# satisfied by the shim's version node or build/lib/libcudnn.so.9), with each
# runtime (TEST_RUNTIMES in tests/tests.mk).
define DNN_RULE
$(call test_dir,dnn,$(1))/$(2): tests/dnn/$(2).cu tests/dnn/dnn_check.h | $(BUILD)/tests
	@mkdir -p $$(dir $$@)
	$$(call TEST_NVCC,$(1)) -o $$@ $$< -L$(CUDA_HOME)/lib64 -lcudnn
endef
$(foreach rt,$(TEST_RUNTIMES),$(foreach p,$(DNN_NAMES),$(eval $(call DNN_RULE,$(rt),$(p)))))
