# blas.mk -- tests of the cuBLAS and cuBLASLt remoting: the emulated cuBLAS and
# cuBLASLt against a naive reference (check_blas_emu, linking libcudarem-emu.so),
# and cuBLAS programs (blas: every hand-written call; blas_l1, blas_l2, blas_l3:
# levels 1, 2 and 3 in all four precisions; blas_lu: batched LU, solve and
# inverse; blas_qr: batched QR and least squares; blas_ex: the level-1 Ex calls in each data type; blas_batch: batched
# gemv and the strided batches; blas_legacy: the legacy API of cublas.h; all generated from
# protocol/cublas.api) and a cuBLASLt program built by
# nvcc run through the shim against a real server (check_e2e_blas), built with
# each runtime (TEST_RUNTIMES in tests/tests.mk).

UNIT_TESTS += $(BUILD)/tests/check_blas_emu $(BUILD)/tests/check_blaslt_emu
E2E_TESTS  += $(BUILD)/tests/check_e2e_blas
BLAS_PROG  := $(foreach rt,$(TEST_RUNTIMES),$(foreach p,blas blas_l1 blas_l2 blas_l3 blas_lu blas_ex blas_batch blas_legacy blas_qr blaslt,$(call test_dir,cuda,$(rt))/$(p)))

test-programs: $(BLAS_PROG)

$(BUILD)/tests/check_blas_emu: tests/blas/check_blas_emu.c tests/unit/crm_check.h protocol/cublas_shape.h \
                               $(EMU_LIB) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(LDFLAGS) -L$(BUILD) -l:libcudarem-emu.so \
	    -Wl,-rpath,'$$ORIGIN/..' $(CHECK_LIBS) -lm

$(BUILD)/tests/check_blaslt_emu: tests/blas/check_blaslt_emu.c tests/unit/crm_check.h common/crm_lt_desc.h \
                                 $(EMU_LIB) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(LDFLAGS) -L$(BUILD) -l:libcudarem-emu.so \
	    -Wl,-rpath,'$$ORIGIN/..' $(CHECK_LIBS) -lm

# The program links the real libcublas.so.13 and the runtime $(1); the shim,
# preloaded, provides cuBLAS and either the runtime or the driver under it.
define BLAS_RULE
$(call test_dir,cuda,$(1))/$(2): tests/blas/$(2).cu tests/blas/blas_check.h tests/blas/blas_ref.h tests/blas/blas_compare.h tests/cuda/cuda_check.h \
                                 | $(call test_dir,cuda,$(1))
	$$(call TEST_NVCC,$(1)) -o $$@ $$< -lcublas
endef
$(foreach rt,$(TEST_RUNTIMES),$(foreach p,blas blas_l1 blas_l2 blas_l3 blas_lu blas_ex blas_batch blas_legacy blas_qr,$(eval $(call BLAS_RULE,$(rt),$(p)))))

# The cuBLASLt program links the real libcublasLt.so.13 (the shim's, preloaded).
define BLASLT_RULE
$(call test_dir,cuda,$(1))/blaslt: tests/blas/blaslt.cu tests/cuda/cuda_check.h | $(call test_dir,cuda,$(1))
	$$(call TEST_NVCC,$(1)) -o $$@ $$< -lcublasLt -ldl
endef
$(foreach rt,$(TEST_RUNTIMES),$(eval $(call BLASLT_RULE,$(rt))))

$(BUILD)/tests/check_e2e_blas: tests/blas/check_e2e_blas.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
                               tests/unit/crm_check.h tests/blas/blas.mk | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -o $@ $< $(E2E_HARNESS) $(LDFLAGS) $(CHECK_LIBS)
