# interpose.mk -- links libcudarem.so, the LD_PRELOAD shim exporting the CUDA runtime
# (and cuBLAS, cuDNN and NVML).
#
# It carries SONAME libcudart.so.13 and the version node of that name, so it also
# satisfies a program's dependency on the runtime: no CUDA library is needed locally.
# Every export of libcudart.so.13, libcublas.so.13, libcudnn.so.9 and libnvidia-ml.so.1
# it does not implement is a weak stand-in returning the library's "not supported" status
# (generated from interpose/*.syms). build/lib/ holds those library names as links
# to the shim, for programs whose other CUDA libraries are absent on the client.

SHIM := $(BUILD)/libcudarem.so
INTERPOSE_SRCS := $(wildcard interpose/*.c)
INTERPOSE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(INTERPOSE_SRCS)) \
                  $(BUILD)/obj/interpose/crm_interpose_gen.o $(BUILD)/obj/interpose/crm_unsupported_gen.o

# name list -> the library's "not supported" status (cudaErrorNotSupported,
# CUBLAS_STATUS_NOT_SUPPORTED, CUDNN_STATUS_NOT_SUPPORTED, NVML_ERROR_NOT_SUPPORTED)
UNSUPPORTED_STATUS_cudart13 := 801
UNSUPPORTED_STATUS_cublas13 := 15
UNSUPPORTED_STATUS_cudnn9   := 3000
UNSUPPORTED_STATUS_nvml     := 3
SYMS_LISTS := $(wildcard interpose/*.syms)

$(GEN)/crm_unsupported_gen.c: $(SYMS_LISTS) interpose/interpose.mk | $(GEN)
	{ echo '/* generated from the interpose name lists; do not edit. */'; \
	  echo '#include "interpose/crm_unsupported.h"'; \
	  $(foreach f,$(SYMS_LISTS),sed 's/.*/CRM_UNSUPPORTED(&, $(UNSUPPORTED_STATUS_$(basename $(notdir $(f)))))/' $(f);) } > $@

$(BUILD)/obj/interpose/crm_unsupported_gen.o: $(GEN)/crm_unsupported_gen.c interpose/crm_unsupported.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

$(BUILD)/obj/interpose/crm_interpose_gen.o: $(GEN)/crm_interpose_gen.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

$(SHIM): $(INTERPOSE_OBJS) $(CLIENT_OBJS) $(PROTO_OBJS) $(UTIL_OBJS) $(COMMON_OBJS) interpose/libcudarem.map
	$(CC) -shared -o $@ -Wl,-soname,libcudart.so.13 -Wl,--version-script=interpose/libcudarem.map \
	    -fvisibility=hidden $(filter %.o,$^) $(LDFLAGS) -ltirpc -lpthread -ldl

SHIM_ALIASES := $(addprefix $(BUILD)/lib/,libcudart.so.13 libcublas.so.13 libcudnn.so.9 libnvidia-ml.so.1)
$(SHIM_ALIASES): | $(SHIM)
	@mkdir -p $(dir $@)
	ln -sf ../libcudarem.so $@

all: $(SHIM) $(SHIM_ALIASES)
