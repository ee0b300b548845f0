# client.mk -- objects of client/: connection, handle ids, pointer tables; and cudarem-smi.
CLIENT_OBJS := $(BUILD)/obj/client/crm_conn.o $(BUILD)/obj/client/crm_handles.o \
               $(BUILD)/obj/client/crm_ptrmap.o $(BUILD)/obj/client/crm_queue.o $(BUILD)/obj/client/crm_deferred.o $(BUILD)/obj/client/crm_codec.o \
               $(BUILD)/obj/client/crm_modules.o $(BUILD)/obj/client/crm_dataconn.o $(BUILD)/obj/client/crm_rpc.o $(BUILD)/obj/client/crm_devices.o \
               $(BUILD)/obj/client/crm_rtcount.o $(BUILD)/obj/client/crm_idle.o $(BUILD)/obj/client/crm_kattr.o $(BUILD)/obj/client/crm_auth_cli.o $(BUILD)/obj/client/crm_hostmem.o $(BUILD)/obj/client/crm_link.o $(BUILD)/obj/client/crm_member.o $(BUILD)/obj/client/crm_pool.o \
               $(BUILD)/obj/client/crm_graph.o $(BUILD)/obj/client/crm_capture.o $(BUILD)/obj/client/crm_graph_exec.o $(BUILD)/obj/client/crm_graph_mem.o $(BUILD)/obj/client/crm_graph_cond.o \
               $(BUILD)/obj/client/crm_managed.o $(BUILD)/obj/client/crm_managed_fault.o $(BUILD)/obj/client/crm_managed_register.o \
               $(BUILD)/obj/client/crm_managed_advice.o $(BUILD)/obj/client/crm_cubin_ptx.o \
               $(BUILD)/obj/client/crm_client_gen.o

$(BUILD)/obj/client/crm_client_gen.o: $(GEN)/crm_client_gen.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

# cudarem-smi: the operator's view of servers (client/cudarem_smi.c), an observer
# connection and nothing of the shim.
SMI := $(BUILD)/cudarem-smi
SMI_OBJS := $(BUILD)/obj/client/cudarem_smi.o $(BUILD)/obj/client/crm_observe.o $(BUILD)/obj/client/crm_link.o \
            $(BUILD)/obj/client/crm_auth_cli.o $(BUILD)/obj/client/crm_rpc.o

$(SMI): $(SMI_OBJS) $(PROTO_OBJS) $(UTIL_OBJS) $(AUTH_OBJS)
	$(CC) -o $@ $^ $(LDFLAGS) -ltirpc

all: $(SMI)
