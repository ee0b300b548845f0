# driver.mk -- the runtime-fallback program (rt_fallback.cu), the driver-API test programs (tests/driver/drv_api.c,
# drv_vmm.c and flood.c, linked with -lcuda against the toolkit's stub, so they have DT_NEEDED libcuda.so.1 as driver
# programs do), the cubin and PTX of the vadd kernel it loads, and its e2e suite.

DRV_DIR   := $(BUILD)/driver
DRV_PROG  := $(DRV_DIR)/drv_api
DRV_VMM   := $(DRV_DIR)/drv_vmm
DRV_FLOOD := $(DRV_DIR)/flood
DRV_MODS  := $(DRV_DIR)/vadd.cubin $(DRV_DIR)/vadd.ptx
DRV_FALLBACK := $(DRV_DIR)/rt_fallback
E2E_TESTS += $(BUILD)/tests/check_e2e_driver

DRV_FAKE_BLAS := $(DRV_DIR)/fake/libcublas.so.13 $(DRV_DIR)/fake/libcudnn.so.9 $(DRV_DIR)/fake/libcublasLt.so.13
DRV_BLAS_FALLBACK := $(DRV_DIR)/blas_fallback
DRV_MIXED := $(DRV_DIR)/mixed $(DRV_DIR)/mixed_static

test-programs: $(DRV_PROG) $(DRV_VMM) $(DRV_FLOOD) $(DRV_MODS) $(DRV_FALLBACK) $(DRV_FAKE_BLAS) $(DRV_BLAS_FALLBACK) $(DRV_MIXED)

# Runtime and driver calls on the same objects, with each runtime.
$(DRV_DIR)/mixed: tests/driver/mixed.cu tests/driver/dcheck.h | $(DRV_DIR)
	$(NVCC) $(NVCCFLAGS) $(CUDA_TEST_WARN) -std=c++17 -o $@ $< -lcuda
$(DRV_DIR)/mixed_static: tests/driver/mixed.cu tests/driver/dcheck.h | $(DRV_DIR)
	$(NVCC) $(subst -cudart shared,-cudart static,$(NVCCFLAGS)) $(CUDA_TEST_WARN) -std=c++17 -o $@ $< -lcuda

# A stand-in for NVIDIA's cuBLAS that checks what the shim hands it, and a program
# (linked against the real cuBLAS and runtime, which the shim replaces) that uses it.
$(DRV_DIR)/fake/libcublas.so.13: tests/driver/fake_cublas.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -fPIC -shared -Wl,-soname,libcublas.so.13 -o $@ $<
$(DRV_DIR)/fake/libcublasLt.so.13: tests/driver/fake_cublaslt.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -fPIC -shared -Wl,-soname,libcublasLt.so.13 -o $@ $<
$(DRV_DIR)/fake/libcudnn.so.9: tests/driver/fake_cudnn.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -fPIC -shared -Wl,-soname,libcudnn.so.9 -o $@ $<
$(DRV_BLAS_FALLBACK): tests/driver/blas_fallback.c tests/driver/dcheck.h | $(DRV_DIR)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -I$(CUDA_HOME)/include -o $@ $< \
	    -L$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lcudnn -lcudart

# A shared-runtime program calling runtime functions the shim hands to NVIDIA's.
$(DRV_FALLBACK): tests/driver/rt_fallback.cu tests/driver/dcheck.h | $(DRV_DIR)
	$(NVCC) $(NVCCFLAGS) $(CUDA_TEST_WARN) -std=c++17 -o $@ $<

$(DRV_DIR):
	mkdir -p $@

$(DRV_PROG): tests/driver/drv_api.c tests/driver/dcheck.h | $(DRV_DIR)
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -I$(CUDA_HOME)/include -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda

$(DRV_VMM): tests/driver/drv_vmm.c tests/driver/dcheck.h | $(DRV_DIR)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -I$(CUDA_HOME)/include -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda

# An authenticated client creating objects until the session limits refuse (check_e2e_limits).
$(DRV_FLOOD): tests/driver/flood.c | $(DRV_DIR)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -I$(CUDA_HOME)/include -o $@ $< \
	    -L$(CUDA_HOME)/lib64/stubs -L$(CUDA_HOME)/lib64 -lcublas -lcuda

$(DRV_DIR)/vadd.cubin: tests/kernels/vadd.cu | $(DRV_DIR)
	$(NVCC) -cubin -arch=sm_90 -o $@ $<
$(DRV_DIR)/vadd.ptx: tests/kernels/vadd.cu | $(DRV_DIR)
	$(NVCC) -ptx -arch=sm_90 -o $@ $<

$(BUILD)/tests/check_e2e_driver: tests/driver/check_e2e_driver.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
                                 tests/unit/crm_check.h tests/driver/driver.mk | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -o $@ $< $(E2E_HARNESS) $(LDFLAGS) $(CHECK_LIBS)
