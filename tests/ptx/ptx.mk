# ptx.mk -- the PTX engine's unit test: the kernels of tests/ptx/ptx_kernels.cu,
# compiled to PTX by nvcc, run by the engine's objects (server/emu/ptx/) on host
# buffers and compared with CPU references.

PTX_TEST        := $(BUILD)/tests/check_ptx
PTX_KERNELS_PTX := $(BUILD)/tests/ptx_kernels.ptx
PTX_ENGINE_OBJS := $(patsubst server/emu/%.c,$(BUILD)/obj/emu/%.o,$(wildcard server/emu/ptx/*.c))
UNIT_TESTS      += $(PTX_TEST)

$(PTX_KERNELS_PTX): tests/ptx/ptx_kernels.cu | $(BUILD)/tests
	$(NVCC) -ptx -arch=sm_90 -o $@ $<

# The module's variables (printf's strings) come from common/crm_ptx.c's reading of
# the PTX, as on the emulated device.
$(PTX_TEST): tests/ptx/check_ptx.c tests/unit/crm_check.h $(PTX_ENGINE_OBJS) $(KERNEL_PARSER_OBJS) \
             $(PTX_KERNELS_PTX) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -DPTX_KERNELS='"$(abspath $(PTX_KERNELS_PTX))"' -o $@ $< \
	    $(PTX_ENGINE_OBJS) $(KERNEL_PARSER_OBJS) $(LDFLAGS) $(KERNEL_LIBS) $(CHECK_LIBS) -lm

