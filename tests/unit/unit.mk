# unit.mk -- Check unit tests of the pure-logic modules: the range and id tables,
# endpoint addresses, the wire format (generated XDR and the hand-written bulk XDR),
# the data channel, the socket reads' polling, shared-memory regions and their
# SIGBUS guard, the compression policy, its live per-chunk choice and its choice of
# zstd parameters, the client's pointer table and what it answers after a round
# trip, the failures of queued calls kept per thread, the token exchange, --quota's lines, the pool's server list and device
# order, a GPU session's kernel time from NVML's samples, the capture of what the
# device prints, the limits on connections not yet admitted, the module cache, the
# parsing of --session-limits, CUDA graphs and stream capture on the client. One binary per module, $(BUILD)/tests/check_<module>.

UNIT_PURE := rangemap idmap addr wire ptrmap chan sockio shm shm_guard codec zlive zshape idle auth quota pool gpu_time \
             devout deferred startup kcache limits graph
UNIT_TESTS += $(UNIT_PURE:%=$(BUILD)/tests/check_%)

# Compiles the test source ($<) and links it with the objects among the prerequisites.
UNIT_LINK = $(CC) $(CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(filter %.o,$^) $(LDFLAGS) $(CHECK_LIBS)

$(BUILD)/tests/check_rangemap: tests/unit/check_rangemap.c tests/unit/crm_check.h \
                               common/crm_rangemap.h $(UTIL_OBJS) | $(BUILD)/tests
	$(UNIT_LINK)

$(BUILD)/tests/check_idmap: tests/unit/check_idmap.c tests/unit/crm_check.h \
                            common/crm_idmap.h $(UTIL_OBJS) | $(BUILD)/tests
	$(UNIT_LINK)

$(BUILD)/tests/check_addr: tests/unit/check_addr.c tests/unit/crm_check.h \
                           common/crm_addr.h protocol/crm_wire.h $(UTIL_OBJS) | $(BUILD)/tests
	$(UNIT_LINK)

$(BUILD)/tests/check_wire: tests/unit/check_wire.c tests/unit/crm_check.h \
                           protocol/crm_bulk.h $(GEN_HEADERS) $(PROTO_OBJS) | $(BUILD)/tests
	$(UNIT_LINK) -ltirpc

$(BUILD)/tests/check_graph: tests/unit/check_graph.c tests/unit/crm_check.h client/crm_graph.h \
                            $(BUILD)/obj/client/crm_graph.o $(BUILD)/obj/client/crm_capture.o \
                            $(BUILD)/obj/client/crm_graph_mem.o $(BUILD)/obj/client/crm_graph_cond.o $(PROTO_OBJS) \
                            $(UTIL_OBJS) | $(BUILD)/tests
	$(UNIT_LINK) -ltirpc -lzstd -lssl -lcrypto

$(BUILD)/tests/check_chan: tests/unit/check_chan.c tests/unit/crm_check.h \
                           protocol/crm_chan.h protocol/crm_payload.h $(GEN_HEADERS) $(PROTO_OBJS) | $(BUILD)/tests
	$(UNIT_LINK) -ltirpc -lpthread

$(BUILD)/tests/check_sockio: tests/unit/check_sockio.c tests/unit/crm_check.h \
                             protocol/crm_sockio.h $(GEN_HEADERS) $(PROTO_OBJS) | $(BUILD)/tests
	$(UNIT_LINK) -ltirpc -lpthread

$(BUILD)/tests/check_pool: tests/unit/check_pool.c tests/unit/crm_check.h \
                           client/crm_pool.h $(BUILD)/obj/client/crm_pool.o | $(BUILD)/tests
	$(UNIT_LINK)

$(BUILD)/tests/check_gpu_time: tests/unit/check_gpu_time.c tests/unit/crm_check.h \
                               server/crm_gpu_time.h $(BUILD)/obj/server/crm_gpu_time.o | $(BUILD)/tests
	$(UNIT_LINK)

$(BUILD)/tests/check_shm: tests/unit/check_shm.c tests/unit/crm_check.h \
                          protocol/crm_shm.h $(BUILD)/obj/protocol/crm_shm.o $(BUILD)/obj/protocol/crm_shm_guard.o \
                          | $(BUILD)/tests
	$(UNIT_LINK) -lpthread

$(BUILD)/tests/check_shm_guard: tests/unit/check_shm_guard.c tests/unit/crm_check.h protocol/crm_shm_guard.h \
                                $(BUILD)/obj/protocol/crm_shm.o $(BUILD)/obj/protocol/crm_shm_guard.o | $(BUILD)/tests
	$(UNIT_LINK) -lpthread

$(BUILD)/tests/check_codec: tests/unit/check_codec.c tests/unit/crm_check.h client/crm_codec.h \
                            $(BUILD)/obj/client/crm_codec.o $(UTIL_OBJS) | $(BUILD)/tests
	$(UNIT_LINK) -lpthread

$(BUILD)/tests/check_zlive: tests/unit/check_zlive.c tests/unit/crm_check.h protocol/crm_zlive.h \
                            $(BUILD)/obj/protocol/crm_zlive.o | $(BUILD)/tests
	$(UNIT_LINK) -lm

$(BUILD)/tests/check_zshape: tests/unit/check_zshape.c tests/unit/crm_check.h protocol/crm_zshape.h \
                             $(BUILD)/obj/protocol/crm_zshape.o | $(BUILD)/tests
	$(UNIT_LINK) -lm

$(BUILD)/tests/check_devout: tests/unit/check_devout.c tests/unit/crm_check.h server/crm_devout.h \
                             $(BUILD)/obj/server/crm_devout.o $(UTIL_OBJS) | $(BUILD)/tests
	$(UNIT_LINK)

$(BUILD)/tests/check_ptrmap: tests/unit/check_ptrmap.c tests/unit/crm_check.h \
                             client/crm_ptrmap.h common/crm_rangemap.h \
                             $(BUILD)/obj/client/crm_ptrmap.o $(UTIL_OBJS) | $(BUILD)/tests
	$(UNIT_LINK) -lpthread

$(BUILD)/tests/check_deferred: tests/unit/check_deferred.c tests/unit/crm_check.h client/crm_deferred.h \
                               $(BUILD)/obj/client/crm_deferred.o | $(BUILD)/tests
	$(UNIT_LINK)

$(BUILD)/tests/check_idle: tests/unit/check_idle.c tests/unit/crm_check.h client/crm_idle.h client/crm_rtcount.h \
                           $(BUILD)/obj/client/crm_idle.o $(BUILD)/obj/client/crm_rtcount.o \
                           $(BUILD)/obj/protocol/crm_api_names.o $(UTIL_OBJS) | $(BUILD)/tests
	$(UNIT_LINK)

$(BUILD)/tests/check_auth: tests/unit/check_auth.c tests/unit/crm_check.h common/crm_auth.h \
                           $(AUTH_OBJS) | $(BUILD)/tests
	$(UNIT_LINK) -lcrypto

$(BUILD)/tests/check_startup: tests/unit/check_startup.c tests/unit/crm_check.h server/crm_startup.h \
                              $(BUILD)/obj/server/crm_startup.o | $(BUILD)/tests
	$(UNIT_LINK)

$(BUILD)/tests/check_kcache: tests/unit/check_kcache.c tests/unit/crm_check.h server/crm_kcache.h \
                             $(BUILD)/obj/server/crm_kcache.o $(BUILD)/obj/common/crm_digest.o $(AUTH_OBJS) \
                             $(UTIL_OBJS) | $(BUILD)/tests
	$(UNIT_LINK) -lcrypto

$(BUILD)/tests/check_limits: tests/unit/check_limits.c tests/unit/crm_check.h server/crm_limits.h \
                             $(BUILD)/obj/server/crm_limits.o $(BUILD)/obj/server/crm_quota.o \
                             $(BUILD)/obj/protocol/crm_limit_kinds.o $(AUTH_OBJS) | $(BUILD)/tests
	$(UNIT_LINK) -lcrypto

$(BUILD)/tests/check_quota: tests/unit/check_quota.c tests/unit/crm_check.h server/crm_quota.h \
                            $(BUILD)/obj/server/crm_quota.o $(AUTH_OBJS) | $(BUILD)/tests
	$(UNIT_LINK) -lcrypto
