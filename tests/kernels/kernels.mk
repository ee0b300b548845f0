# kernels.mk -- kernel launches: the fatbinary/cubin/PTX parsers (common/), their
# libraries (zstd, LZ4, libcrypto), the unit suite over fatbinaries nvcc builds at
# test time, the nvcc test programs, their CPU kernels for the emulated device,
# and the end-to-end suite.

KERNEL_PARSER_OBJS := $(BUILD)/obj/common/crm_fatbin.o $(BUILD)/obj/common/crm_cubin.o $(BUILD)/obj/common/crm_image.o \
                      $(BUILD)/obj/common/crm_ptx.o
KERNEL_COMMON_OBJS := $(KERNEL_PARSER_OBJS) $(BUILD)/obj/common/crm_digest.o
KERNEL_LIBS := -lzstd -llz4 -lcrypto

# Hidden visibility: linking them never adds exports to the shim or the emulated device.
$(KERNEL_COMMON_OBJS): $(BUILD)/obj/common/%.o: common/%.c common/crm_fatbin.h common/crm_image.h common/crm_digest.h | $(BUILD)/obj/common
	$(CC) $(CFLAGS) -fvisibility=hidden -MMD -MP -c $< -o $@

# The recipes of these link every prerequisite object ($^). The shim's and the
# server's put LDFLAGS after the objects; the emulated device's puts it before them,
# so it gets the libraries as files after its objects instead.
KERNEL_LIB_FILES := $(foreach l,zstd lz4,$(shell $(CC) -print-file-name=lib$(l).so))
$(SHIM) $(SERVER): $(KERNEL_COMMON_OBJS)
$(SHIM) $(SERVER): LDFLAGS += $(KERNEL_LIBS)
$(EMU_LIB): $(KERNEL_PARSER_OBJS) $(KERNEL_LIB_FILES)

# ---- test programs (nvcc, each runtime) and their CPU kernels ---------------------
# Each runtime's programs go to their directory (TEST_RUNTIMES in tests/tests.mk);
# the static ones are built with KTEST_STATIC_RUNTIME defined. $(KTEST_DIR) also
# holds the CPU kernels and the fatbinaries.
KTEST_DIR   := $(call test_dir,kernels,shared)
KTEST_NAMES := vadd vadd_compressed vadd_ptx saxpy scalars symbols multi_tu dlopen badlaunch loop kprintf step \
               graphs graphstep graphcond managed nvrtc
KTEST_PROGS := $(foreach rt,$(TEST_RUNTIMES),$(addprefix $(call test_dir,kernels,$(rt))/,$(KTEST_NAMES) \
                   libktest_shlib.so)) $(KTEST_DIR)/libktest_cpu_kernels.so
KTEST_DEFS_shared :=
KTEST_DEFS_static := -DKTEST_STATIC_RUNTIME
KTEST_NVCC   = $(call TEST_NVCC,$(1)) $(KTEST_DEFS_$(1))
KTEST_HDRS  := tests/kernels/kcheck.h tests/kernels/ksteps.h
# Fatbinaries the unit suite parses, built at test time from fatbin_src.cu.
KTEST_FATBINS := $(addprefix $(KTEST_DIR)/fb_,plain.fatbin compressed.fatbin lz4.fatbin multi.fatbin ptx.fatbin)

# $(1): the directory, $(2): the runtime. The shared library dlopen loads is built
# as nvcc builds one by default: with the static runtime, its own runtime inside.
define KTEST_RULES
$(1):
	mkdir -p $$@
$(1)/%: tests/kernels/%.cu $(KTEST_HDRS) | $(1)
	$$(call KTEST_NVCC,$(2)) -o $$@ $$<
$(1)/vadd_compressed: tests/kernels/vadd.cu $(KTEST_HDRS) | $(1)
	$$(call KTEST_NVCC,$(2)) -Xfatbin -compress-all -DKTEST_NAME='"vadd_compressed"' -o $$@ $$<
$(1)/vadd_ptx: tests/kernels/vadd.cu $(KTEST_HDRS) | $(1)
	$$(call KTEST_NVCC,$(2)) -gencode arch=compute_90,code=compute_90 -DKTEST_PTX_ONLY -DKTEST_NAME='"vadd_ptx"' \
	    -o $$@ $$<
$(1)/multi_tu: tests/kernels/multi_a.cu tests/kernels/multi_b.cu $(KTEST_HDRS) | $(1)
	$$(call KTEST_NVCC,$(2)) -o $$@ tests/kernels/multi_a.cu tests/kernels/multi_b.cu
$(1)/step: tests/kernels/step.cu $(KTEST_HDRS) | $(1)
	$$(call KTEST_NVCC,$(2)) -o $$@ $$< -lcublas
$(1)/graphs: tests/kernels/graphs.cu $(KTEST_HDRS) | $(1)
	$$(call KTEST_NVCC,$(2)) -o $$@ $$< -lcublas -lcudnn
$(1)/nvrtc: tests/kernels/nvrtc.cu $(KTEST_HDRS) | $(1)
	$$(call KTEST_NVCC,$(2)) -o $$@ $$< -lnvrtc
$(1)/graphstep: tests/kernels/graphstep.cu $(KTEST_HDRS) | $(1)
	$$(call KTEST_NVCC,$(2)) -o $$@ $$< -lcublas
$(1)/dlopen: tests/kernels/dlopen_main.cu $(KTEST_HDRS) | $(1)
	$$(call KTEST_NVCC,$(2)) -o $$@ $$< -ldl
$(1)/libktest_shlib.so: tests/kernels/shlib_kernels.cu | $(1)
	$$(call KTEST_NVCC,$(2)) -shared -Xcompiler -fPIC -o $$@ $$<
endef
$(foreach rt,$(TEST_RUNTIMES),$(eval $(call KTEST_RULES,$(call test_dir,kernels,$(rt)),$(rt))))

$(KTEST_DIR)/libktest_cpu_kernels.so: tests/kernels/cpu_kernels.c server/emu/cudarem_emu_kernel.h | $(KTEST_DIR)
	$(CC) $(CFLAGS) -fvisibility=hidden -shared -o $@ $< $(LDFLAGS)

$(KTEST_DIR)/fb_plain.fatbin: tests/kernels/fatbin_src.cu | $(KTEST_DIR)
	$(NVCC) -Wno-deprecated-gpu-targets --fatbin -o $@ $<
$(KTEST_DIR)/fb_compressed.fatbin: tests/kernels/fatbin_src.cu | $(KTEST_DIR)
	$(NVCC) -Wno-deprecated-gpu-targets -Xfatbin -compress-all --fatbin -o $@ $<
$(KTEST_DIR)/fb_lz4.fatbin: tests/kernels/fatbin_src.cu | $(KTEST_DIR)
	$(NVCC) -Wno-deprecated-gpu-targets -Xfatbin -compress-all -compress-mode=speed --fatbin -o $@ $<
$(KTEST_DIR)/fb_multi.fatbin: tests/kernels/fatbin_src.cu | $(KTEST_DIR)
	$(NVCC) -Wno-deprecated-gpu-targets -gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code=sm_90 \
	    -gencode arch=compute_90,code=compute_90 --fatbin -o $@ $<
$(KTEST_DIR)/fb_ptx.fatbin: tests/kernels/fatbin_src.cu | $(KTEST_DIR)
	$(NVCC) -Wno-deprecated-gpu-targets -gencode arch=compute_90,code=compute_90 --fatbin -o $@ $<

# ---- Check suites -----------------------------------------------------------------
UNIT_TESTS += $(BUILD)/tests/check_fatbin
E2E_TESTS  += $(BUILD)/tests/check_e2e_kernels
test-programs: $(KTEST_PROGS) $(KTEST_FATBINS)

$(BUILD)/tests/check_fatbin: tests/kernels/check_fatbin.c tests/unit/crm_check.h common/crm_fatbin.h \
                             $(KERNEL_COMMON_OBJS) $(KTEST_FATBINS) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -DKTEST_DIR='"$(abspath $(KTEST_DIR))"' -o $@ $< \
	    $(KERNEL_COMMON_OBJS) $(LDFLAGS) $(KERNEL_LIBS) $(CHECK_LIBS)

$(BUILD)/tests/check_e2e_kernels: tests/kernels/check_e2e_kernels.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
                                  tests/unit/crm_check.h $(KTEST_PROGS) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -o $@ $< $(E2E_HARNESS) $(LDFLAGS) $(CHECK_LIBS)
