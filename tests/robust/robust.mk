# robust.mk -- the server against malformed requests (starts a real server).
$(BUILD)/tests/check_malformed: tests/robust/check_malformed.c $(PROTO_OBJS) $(UTIL_OBJS) $(SERVER) $(GEN_HEADERS) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -DCRM_TEST_SERVER='"$(abspath $(SERVER))"' -o $@ $< \
	    $(PROTO_OBJS) $(UTIL_OBJS) $(LDFLAGS) $(CHECK_LIBS) -ltirpc

E2E_TESTS += $(BUILD)/tests/check_malformed
