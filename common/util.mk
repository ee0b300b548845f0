# util.mk -- builds the shared helpers of common/ (logging, range and id tables).
UTIL_OBJS := $(BUILD)/obj/common/crm_log.o $(BUILD)/obj/common/crm_rangemap.o \
             $(BUILD)/obj/common/crm_idmap.o $(BUILD)/obj/common/crm_addr.o
# The token exchange (libcrypto), which the shim and the server link.
AUTH_OBJS := $(BUILD)/obj/common/crm_auth.o
