# robust.mk -- the server against malformed requests (check_malformed; for shared
# pinned memory, check_hostmem) and sessions handing each other's objects
# (check_isolation); all start a real server and speak raw RPC to it
# (tests/robust/raw_session.h).
RAW_SESSION := tests/robust/raw_session.c

$(BUILD)/tests/check_malformed: tests/robust/check_malformed.c $(RAW_SESSION) tests/robust/raw_session.h \
                                $(PROTO_OBJS) $(UTIL_OBJS) $(SERVER) $(GEN_HEADERS) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -DCRM_TEST_SERVER='"$(abspath $(SERVER))"' -o $@ $< $(RAW_SESSION) \
	    $(PROTO_OBJS) $(UTIL_OBJS) $(LDFLAGS) $(CHECK_LIBS) -ltirpc

E2E_TESTS += $(BUILD)/tests/check_malformed

$(BUILD)/tests/check_isolation: tests/robust/check_isolation.c $(RAW_SESSION) tests/robust/raw_session.h \
                                $(GEN)/crm_iso_gen.c $(PROTO_OBJS) $(UTIL_OBJS) $(SERVER) $(GEN_HEADERS) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -DCRM_TEST_SERVER='"$(abspath $(SERVER))"' -o $@ $< $(RAW_SESSION) \
	    $(GEN)/crm_iso_gen.c $(PROTO_OBJS) $(UTIL_OBJS) $(LDFLAGS) $(CHECK_LIBS) -ltirpc

E2E_TESTS += $(BUILD)/tests/check_isolation

$(BUILD)/tests/check_hostmem: tests/robust/check_hostmem.c $(RAW_SESSION) tests/robust/raw_session.h \
                              $(PROTO_OBJS) $(UTIL_OBJS) $(SERVER) $(GEN_HEADERS) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -DCRM_TEST_SERVER='"$(abspath $(SERVER))"' -o $@ $< $(RAW_SESSION) \
	    $(PROTO_OBJS) $(UTIL_OBJS) $(LDFLAGS) $(CHECK_LIBS) -ltirpc

E2E_TESTS += $(BUILD)/tests/check_hostmem
