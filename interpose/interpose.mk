# interpose.mk -- links libcudarem.so, the LD_PRELOAD shim exporting the CUDA runtime
# (and cuBLAS, cuDNN and NVML).
#
# It carries SONAME libcudart.so.13 and the version node of that name, so it also
# satisfies a program's dependency on the runtime: no CUDA library is needed locally.
# Every export of libcudart.so.13, libcublas.so.13, libcublasLt.so.13, libcudnn.so.9 and libnvidia-ml.so.1
# it does not implement is a weak stand-in returning the library's "not supported" status
# (generated from interpose/*.syms). build/lib/ holds those library names as links
# to the shim, for programs whose other CUDA libraries are absent on the client.

SHIM := $(BUILD)/libcudarem.so
INTERPOSE_SRCS := $(wildcard interpose/*.c)
INTERPOSE_SRCS := $(filter-out interpose/crm_loader_stub.c,$(INTERPOSE_SRCS))
INTERPOSE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(INTERPOSE_SRCS)) \
                  $(BUILD)/obj/interpose/crm_interpose_gen.o $(BUILD)/obj/interpose/crm_unsupported_gen.o \
                  $(BUILD)/obj/interpose/crm_drv_gen.o $(BUILD)/obj/interpose/crm_fallback_gen.o \
                  $(BUILD)/obj/interpose/crm_blas_gen.o $(BUILD)/obj/interpose/crm_dnn_gen.o \
                  $(BUILD)/obj/interpose/crm_blas_legacy_gen.o

# name list -> the library's "not supported" status (cudaErrorNotSupported,
# CUBLAS_STATUS_NOT_SUPPORTED, CUDNN_STATUS_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED,
# NVML_ERROR_NOT_SUPPORTED)
# and whether it is also the runtime's last error (only for the runtime's own calls)
UNSUPPORTED_STATUS_cuda13   := 801, 0
UNSUPPORTED_STATUS_nvml     := 3, 0
# The runtime's, cuBLAS's, cuDNN's and cuBLASLt's lists are not here: their unimplemented calls are
# trampolines to NVIDIA's libraries when the client has them (crm_fallback.h).
SYMS_LISTS := $(filter-out interpose/cudart13.syms interpose/cublas13.syms interpose/cudnn9.syms \
                            interpose/cublasLt13.syms,\
                            $(wildcard interpose/*.syms))

$(GEN)/crm_unsupported_gen.c: $(SYMS_LISTS) interpose/interpose.mk | $(GEN)
	{ echo '/* generated from the interpose name lists; do not edit. */'; \
	  echo '#include "interpose/crm_unsupported.h"'; \
	  $(foreach f,$(SYMS_LISTS),sed 's/.*/CRM_UNSUPPORTED(&, $(UNSUPPORTED_STATUS_$(basename $(notdir $(f)))))/' $(f);) } > $@

# Runtime, cuBLAS, cuDNN and cuBLASLt calls the shim does not implement: trampolines
# to NVIDIA's libraries (interpose/crm_fallback.h), with their handle translated;
# cuDNN calls taking the shim's own legacy descriptors, and cuBLASLt calls taking
# its matmul, layout or preference descriptors, are never handed over. cuBLASLt's
# undeclared (internal) functions are: only NVIDIA's cuBLAS calls them, with its own
# values, once the shim's cublasLt* exports have taken its references.
comma := ,
empty :=
space := $(empty) $(empty)
CUDNN_HEADERS := $(subst $(space),$(comma),$(addprefix $(CUDA_HOME)/include/,cudnn_graph.h cudnn_ops.h cudnn_cnn.h cudnn_adv.h))
FALLBACK_SPECS := interpose/cudart13.syms:801:1 \
                  interpose/cublas13.syms:15:0:$(CUDA_HOME)/include/cublas_api.h,interpose/cublas_internal.h:cublasHandle_t \
                  'interpose/cudnn9.syms:3000:0:$(CUDNN_HEADERS):cudnnHandle_t:\bcudnn(?!Backend)\w*Descriptor_t\b' \
                  'interpose/cublasLt13.syms:15:0:$(CUDA_HOME)/include/cublasLt.h:cublasLtHandle_t:\bcublasLt(MatmulDesc|MatrixLayout|MatmulPreference)_t\b:forward'
$(GEN)/crm_fallback_gen.c: tools/gen_fallback.py interpose/cudart13.syms interpose/cublas13.syms interpose/cublas_internal.h \
                           interpose/cudnn9.syms interpose/cublasLt13.syms | $(GEN)
	$(PYTHON) tools/gen_fallback.py $@.tmp $(FALLBACK_SPECS)
	mv $@.tmp $@

$(BUILD)/obj/interpose/crm_fallback_gen.o: $(GEN)/crm_fallback_gen.c interpose/crm_fallback.h interpose/crm_unsupported.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

# The driver's cuGetProcAddress table and error names, from the toolkit's headers.
$(GEN)/crm_drv_gen.c: tools/gen_drv_tables.py interpose/cuda13.syms $(CUDA_HOME)/include/cuda.h \
                      $(CUDA_HOME)/include/cudaTypedefs.h | $(GEN)
	$(PYTHON) tools/gen_drv_tables.py $(CUDA_HOME)/include/cuda.h $(CUDA_HOME)/include/cudaTypedefs.h \
	    interpose/cuda13.syms $@.tmp
	mv $@.tmp $@

$(BUILD)/obj/interpose/crm_drv_gen.o: $(GEN)/crm_drv_gen.c interpose/crm_drv_tables.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

# Loader stand-ins: empty libraries whose SONAMEs are the driver's and NVML's, in
# lib/ beside the shim. The shim loads them when it loads (interpose/crm_init.c), so
# those names are taken before any library the program loads later needs them: its
# DT_NEEDED on libcuda.so.1 then binds to the shim's symbols, whether or not a
# driver is installed. A shim copied without its lib/ still loads, without that.
SHIM_LOADER_STUBS := $(BUILD)/lib/libcuda.so.1 $(BUILD)/lib/libnvidia-ml.so.1
$(BUILD)/lib/libcuda.so.1 $(BUILD)/lib/libnvidia-ml.so.1: interpose/crm_loader_stub.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS)) -shared -Wl,-soname,$(notdir $@) -o $@ $<

$(BUILD)/obj/interpose/crm_unsupported_gen.o: $(GEN)/crm_unsupported_gen.c interpose/crm_unsupported.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

$(BUILD)/obj/interpose/crm_blas_gen.o $(BUILD)/obj/interpose/crm_dnn_gen.o: $(BUILD)/obj/interpose/%.o: $(GEN)/%.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

# The legacy cuBLAS API (cublas.h) as wrappers over the v2 calls, from the two headers.
$(GEN)/crm_blas_legacy_gen.c: protocol/gen_legacy.py $(CUDA_HOME)/include/cublas.h $(CUDA_HOME)/include/cublas_api.h \
                              | $(GEN)
	$(PYTHON) protocol/gen_legacy.py $@.tmp $(CUDA_HOME)/include
	mv $@.tmp $@

$(BUILD)/obj/interpose/crm_blas_legacy_gen.o: $(GEN)/crm_blas_legacy_gen.c interpose/crm_blas_legacy.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

$(BUILD)/obj/interpose/crm_interpose_gen.o: $(GEN)/crm_interpose_gen.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

# Common code only the shim uses: the MAC of the driver's integrity check.
SHIM_COMMON_OBJS := $(BUILD)/obj/common/crm_md2.o
$(SHIM_COMMON_OBJS): $(BUILD)/obj/common/%.o: common/%.c common/%.h | $(BUILD)/obj/common
	$(CC) $(CFLAGS) -fvisibility=hidden -MMD -MP -c $< -o $@

# -Bsymbolic-functions: the shim's calls into itself never reach a program's own
# definitions (a program with a static runtime may export cudaMalloc too).
$(SHIM): $(INTERPOSE_OBJS) $(CLIENT_OBJS) $(PROTO_OBJS) $(UTIL_OBJS) $(AUTH_OBJS) $(COMMON_OBJS) $(SHIM_COMMON_OBJS) \
         interpose/libcudarem.map
	$(CC) -shared -o $@ -Wl,-soname,libcudart.so.13 -Wl,--version-script=interpose/libcudarem.map \
	    -Wl,-Bsymbolic-functions -fvisibility=hidden $(filter %.o,$^) \
	    $(LDFLAGS) -ltirpc -lpthread -ldl

SHIM_ALIASES := $(addprefix $(BUILD)/lib/,libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9)
$(SHIM_ALIASES): | $(SHIM)
	@mkdir -p $(dir $@)
	ln -sf ../libcudarem.so $@

all: $(SHIM) $(SHIM_ALIASES) $(SHIM_LOADER_STUBS)

# sigaction's stand-in runs inside a sanitizer's initialisation (interpose/crm_signals.c):
# never instrumented.
$(BUILD)/obj/interpose/crm_signals.o: interpose/crm_signals.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS)) -MMD -MP -c $< -o $@
