# examples.mk -- builds the example CUDA programs and runs the demo (`make demo`).
EXAMPLES := $(BUILD)/examples/remote_copy

$(BUILD)/examples/%: examples/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -o $@ $<

.PHONY: demo
demo: $(SHIM) $(SERVER) $(EMU_LIB) $(EXAMPLES)
	examples/run-demo.sh $(BUILD)

all: $(EXAMPLES)

# The checks that need a real GPU (run on a GPU machine; logs to $OUT).
.PHONY: gpu-check
gpu-check:
	tools/gpu-check.sh
