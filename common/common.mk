# common.mk -- code shared by the shim, the daemon and the emulated device.
#
# COMMON_OBJS: position-independent objects other libraries link. They are built
# with hidden visibility, so linking them never adds exports to a library.

CUDART_LIB    ?= $(CUDA_HOME)/lib64/libcudart.so.13
CUDA_ERR_HDR  := $(CUDA_HOME)/include/driver_types.h

# crm_launch_cfg.o and crm_symbol_copy.o: the entry points of common/crm_nvcc_rt.h,
# for the two libraries that define its hooks (the shim, the emulated device).
COMMON_OBJS   := $(BUILD)/obj/common/crm_errors.o $(BUILD)/obj/common/crm_launch_cfg.o \
                 $(BUILD)/obj/common/crm_symbol_copy.o

$(BUILD)/obj/common:
	mkdir -p $@

# The error table, asked of the real libcudart at build time (works without a GPU).
$(GEN)/crm_errors_table.h: tools/gen_errors.py $(CUDA_ERR_HDR) | $(GEN)
	$(PYTHON) tools/gen_errors.py $(CUDA_ERR_HDR) $(CUDART_LIB) $@.tmp
	mv $@.tmp $@

$(BUILD)/obj/common/crm_errors.o: common/crm_errors.c common/crm_errors.h $(GEN)/crm_errors_table.h | $(BUILD)/obj/common
	$(CC) $(CFLAGS) -fvisibility=hidden -c $< -o $@ -MMD -MP

$(BUILD)/obj/common/crm_launch_cfg.o $(BUILD)/obj/common/crm_symbol_copy.o: $(BUILD)/obj/common/%.o: common/%.c \
                                                                             common/crm_nvcc_rt.h | $(BUILD)/obj/common
	$(CC) $(CFLAGS) -fvisibility=hidden -c $< -o $@ -MMD -MP
