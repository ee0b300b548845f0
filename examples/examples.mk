# examples.mk -- builds the example CUDA programs and runs the demo (`make demo`).
EXAMPLES := $(BUILD)/examples/remote_copy

# Built as `nvcc prog.cu` builds by default, with the static runtime: NVIDIA's
# runtime inside the program reaches the shim through its driver layer.
$(BUILD)/examples/%: examples/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(subst -cudart shared,-cudart static,$(NVCCFLAGS)) -o $@ $<

.PHONY: demo
demo: $(SHIM) $(SERVER) $(EMU_LIB) $(EXAMPLES)
	examples/run-demo.sh $(BUILD)

test-programs: $(EXAMPLES)
