# protocol.mk -- generates the wire format from protocol/cudart.api and builds it.
#
# gen_api.py splices the types generated from protocol/*.api into cudarem.x ->
# $(GEN)/crm_api.x;
# rpcgen turns that into crm_api.h and the XDR routines crm_api_xdr.c. `-i 0`: no
# inline decoding, which reads words straight from the record buffer, misaligned
# when a peer's record fragments are not multiples of 4 (found by fuzz_request).

API_SPECS     := $(wildcard protocol/*.api)
API_TYPES     := $(wildcard protocol/*_types.x)
API_GENERATED := $(GEN)/crm_api.x $(GEN)/crm_client_gen.h $(GEN)/crm_client_gen.c \
                 $(GEN)/crm_interpose_gen.c $(GEN)/crm_server_gen.h $(GEN)/crm_server_gen.c \
                 $(GEN)/crm_rt_fns_gen.h $(GEN)/crm_api_names.c $(GEN)/crm_iso_gen.h $(GEN)/crm_iso_gen.c \
                 $(GEN)/crm_blas_gen.c $(GEN)/crm_h_blas_gen.c $(GEN)/crm_emu_blas_gen.c \
                 $(GEN)/crm_dnn_gen.c $(GEN)/crm_h_dnn_gen.c

$(API_GENERATED) &: $(API_SPECS) $(API_TYPES) protocol/cudarem.x protocol/gen_api.py protocol/gen_iso.py \
                    protocol/gen_blas.py protocol/gen_dnn.py tools/gen_fallback.py $(CUDA_HOME)/include/cublas_api.h \
                    $(CUDA_HOME)/include/cudnn_ops.h $(CUDA_HOME)/include/cudnn_cnn.h | $(GEN)
	$(PYTHON) protocol/gen_api.py --cuda-include $(CUDA_HOME)/include protocol/cudarem.x $(GEN) $(API_SPECS)

$(GEN)/crm_api.h: $(GEN)/crm_api.x
	rm -f $@ && cd $(GEN) && rpcgen -h -o crm_api.h crm_api.x

$(GEN)/crm_api_xdr.c: $(GEN)/crm_api.x $(GEN)/crm_api.h protocol/protocol.mk
	rm -f $@ && cd $(GEN) && rpcgen -c -i 0 -o crm_api_xdr.c crm_api.x

# Every object that includes a generated header waits for it.
GEN_HEADERS := $(GEN)/crm_api.h $(GEN)/crm_client_gen.h $(GEN)/crm_server_gen.h $(GEN)/crm_rt_fns_gen.h

PROTO_OBJS := $(BUILD)/obj/protocol/crm_api_xdr.o $(BUILD)/obj/protocol/crm_bulk.o $(BUILD)/obj/protocol/crm_payload.o \
              $(BUILD)/obj/protocol/crm_shm.o $(BUILD)/obj/protocol/crm_shm_guard.o $(BUILD)/obj/protocol/crm_chan.o $(BUILD)/obj/protocol/crm_chan_link.o \
              $(BUILD)/obj/protocol/crm_sockio.o $(BUILD)/obj/protocol/crm_tls.o $(BUILD)/obj/protocol/crm_zlive.o $(BUILD)/obj/protocol/crm_zshape.o \
              $(BUILD)/obj/protocol/crm_api_names.o $(BUILD)/obj/protocol/crm_status_json.o \
              $(BUILD)/obj/protocol/crm_limit_kinds.o

$(BUILD)/obj/protocol/crm_api_xdr.o: $(GEN)/crm_api_xdr.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-unused-variable -Wno-unused-parameter -c $< -o $@ -MMD -MP

$(BUILD)/obj/protocol/crm_api_names.o: $(GEN)/crm_api_names.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

# Hand-written sources anywhere in the tree: one object each under $(BUILD)/obj.
$(BUILD)/obj/%.o: %.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
