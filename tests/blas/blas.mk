# blas.mk -- tests of the cuBLAS remoting: the emulated cuBLAS against a naive
# reference (check_blas_emu, linking libcudarem-emu.so), and a cuBLAS program built
# by nvcc run through the shim against a real server (check_e2e_blas).

UNIT_TESTS += $(BUILD)/tests/check_blas_emu
E2E_TESTS  += $(BUILD)/tests/check_e2e_blas
BLAS_PROG  := $(BUILD)/cuda/blas

all: $(BLAS_PROG)

$(BUILD)/tests/check_blas_emu: tests/blas/check_blas_emu.c tests/unit/crm_check.h protocol/cublas_shape.h \
                               $(EMU_LIB) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(LDFLAGS) -L$(BUILD) -l:libcudarem-emu.so \
	    -Wl,-rpath,'$$ORIGIN/..' $(CHECK_LIBS) -lm

# The program links the real libcublas.so.13 and the shared runtime; the shim,
# preloaded, provides both.
$(BLAS_PROG): tests/blas/blas.cu tests/cuda/cuda_check.h | $(BUILD)/cuda
	$(NVCC) $(NVCCFLAGS) $(CUDA_TEST_WARN) -std=c++17 -o $@ $< -lcublas

$(BUILD)/tests/check_e2e_blas: tests/blas/check_e2e_blas.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
                               tests/unit/crm_check.h tests/blas/blas.mk | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -o $@ $< $(E2E_HARNESS) $(LDFLAGS) $(CHECK_LIBS)
