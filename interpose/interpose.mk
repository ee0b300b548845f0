# interpose.mk -- links libcudarem.so, the LD_PRELOAD shim exporting the CUDA runtime.
#
# It carries SONAME libcudart.so.13 and the version node of that name, so it also
# satisfies a program's dependency on the runtime: no CUDA library is needed locally.
# Every libcudart.so.13 export it does not implement is a weak stand-in returning
# cudaErrorNotSupported (generated from interpose/cudart13.syms).

SHIM := $(BUILD)/libcudarem.so
INTERPOSE_SRCS := $(wildcard interpose/*.c)
INTERPOSE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(INTERPOSE_SRCS)) \
                  $(BUILD)/obj/interpose/crm_interpose_gen.o $(BUILD)/obj/interpose/crm_unsupported_gen.o

$(GEN)/crm_unsupported_gen.c: interpose/cudart13.syms | $(GEN)
	{ echo '/* generated from interpose/cudart13.syms; do not edit. */'; \
	  echo '#include "interpose/crm_unsupported.h"'; \
	  sed 's/.*/CRM_UNSUPPORTED(&)/' $<; } > $@

$(BUILD)/obj/interpose/crm_unsupported_gen.o: $(GEN)/crm_unsupported_gen.c interpose/crm_unsupported.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/interpose/crm_interpose_gen.o: $(GEN)/crm_interpose_gen.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(SHIM): $(INTERPOSE_OBJS) $(CLIENT_OBJS) $(PROTO_OBJS) $(UTIL_OBJS) $(COMMON_OBJS) interpose/libcudarem.map
	$(CC) -shared -o $@ -Wl,-soname,libcudart.so.13 -Wl,--version-script=interpose/libcudarem.map \
	    -fvisibility=hidden $(filter %.o,$^) $(LDFLAGS) -ltirpc -lpthread -ldl

all: $(SHIM)
