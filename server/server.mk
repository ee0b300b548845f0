# server.mk -- links cudarem-server. The backend (libcudart.so.13 or
# libcudarem-emu.so) is loaded at run time, so the server builds and runs on a
# machine without a GPU driver.

SERVER := $(BUILD)/cudarem-server
SERVER_SRCS := $(wildcard server/*.c)
SERVER_GEN_OBJS := $(BUILD)/obj/server/crm_server_gen.o $(BUILD)/obj/server/crm_h_blas_gen.o \
                   $(BUILD)/obj/server/crm_h_dnn_gen.o
SERVER_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SERVER_SRCS)) $(SERVER_GEN_OBJS)

$(SERVER_GEN_OBJS): $(BUILD)/obj/server/%.o: $(GEN)/%.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

$(SERVER): $(SERVER_OBJS) $(PROTO_OBJS) $(UTIL_OBJS) $(AUTH_OBJS)
	$(CC) -o $@ $^ $(LDFLAGS) -ltirpc -ldl

all: $(SERVER) $(EMU_LIB)
