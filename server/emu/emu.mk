# emu.mk -- the CPU-emulated CUDA device, $(BUILD)/libcudarem-emu.so (its PTX engine
# in server/emu/ptx/), and its unit test.
#
# The library exports only CUDA names (the runtime's, cuBLAS's, cuDNN's, and the
# driver's virtual memory calls of crm_emu_vmm.c): everything is compiled with
# hidden visibility and the CUDA entry points are marked CRM_EXPORT.

EMU_SRCS   := $(wildcard server/emu/*.c) $(wildcard server/emu/ptx/*.c)
EMU_OBJS   := $(patsubst server/emu/%.c,$(BUILD)/obj/emu/%.o,$(EMU_SRCS)) $(BUILD)/obj/emu/crm_emu_blas_gen.o
EMU_LIB    := $(BUILD)/libcudarem-emu.so
EMU_CFLAGS := -fvisibility=hidden -MMD -MP

all: $(EMU_LIB)
test-programs: $(BUILD)/tests/check_emu
UNIT_TESTS += $(BUILD)/tests/check_emu

$(BUILD)/obj/emu:
	mkdir -p $@

$(BUILD)/obj/emu/%.o: server/emu/%.c | $(BUILD)/obj/emu
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(EMU_CFLAGS) -c $< -o $@ -MMD -MP

# The emulated cuBLAS calls of protocol/cublas.api's `blas` rows (protocol/gen_blas.py).
$(BUILD)/obj/emu/crm_emu_blas_gen.o: $(GEN)/crm_emu_blas_gen.c $(GEN_HEADERS) | $(BUILD)/obj/emu
	$(CC) $(CFLAGS) $(EMU_CFLAGS) -c $< -o $@

# The id table of common/ (nvcc's registered host functions and variables),
# compiled hidden like the library's own code, so that it adds no export.
EMU_UTIL_OBJS := $(BUILD)/obj/emu/common/crm_idmap.o

$(EMU_UTIL_OBJS): $(BUILD)/obj/emu/common/%.o: common/%.c common/%.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(EMU_CFLAGS) -c $< -o $@

# The emulated cuBLAS computes with OpenBLAS (Debian libopenblas-dev); the emulated
# cuDNN needs libm.
$(EMU_LIB): $(EMU_OBJS) $(EMU_UTIL_OBJS) $(COMMON_OBJS)
	$(CC) -shared -Wl,-soname,libcudarem-emu.so $(LDFLAGS) -o $@ $^ -lpthread -lopenblas -lm

# The test links the library itself, plus the pure parsing object (not exported).
$(BUILD)/tests/check_emu: tests/unit/check_emu.c tests/unit/crm_check.h $(EMU_LIB) \
                          $(BUILD)/obj/emu/crm_emu_env.o | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(BUILD)/obj/emu/crm_emu_env.o \
	    $(LDFLAGS) -L$(BUILD) -l:libcudarem-emu.so -Wl,-rpath,'$$ORIGIN/..' \
	    $(CHECK_LIBS) -ldl -lpthread

-include $(EMU_OBJS:.o=.d) $(EMU_UTIL_OBJS:.o=.d)
