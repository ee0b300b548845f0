# server.mk -- links cudarem-server. The backend (libcudart.so.13 or
# libcudarem-emu.so) is loaded at run time, so the server builds and runs on a
# machine without a GPU driver.

SERVER := $(BUILD)/cudarem-server
SERVER_SRCS := $(wildcard server/*.c)
# The generated dispatch and handlers; tests/fuzz/fuzz.mk builds the server from this list too.
SERVER_GEN_SRCS := $(addprefix $(GEN)/,crm_server_gen.c crm_h_blas_gen.c crm_h_dnn_gen.c)
SERVER_GEN_OBJS := $(patsubst $(GEN)/%.c,$(BUILD)/obj/server/%.o,$(SERVER_GEN_SRCS))
SERVER_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SERVER_SRCS)) $(SERVER_GEN_OBJS)

$(SERVER_GEN_OBJS): $(BUILD)/obj/server/%.o: $(GEN)/%.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@ -MMD -MP

$(SERVER): $(SERVER_OBJS) $(PROTO_OBJS) $(UTIL_OBJS) $(AUTH_OBJS)
	$(CC) -o $@ $^ $(LDFLAGS) -ltirpc -ldl

all: $(SERVER) $(EMU_LIB)
