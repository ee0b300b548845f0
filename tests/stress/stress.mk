# stress.mk -- the concurrency stress: tests/stress/stress.cu (many threads, streams
# of every kind, both API layers, every kind of queued work, every byte checked),
# built with each runtime (TEST_RUNTIMES in tests/tests.mk), and check_e2e_stress,
# which runs it through the shim against real servers over TCP, Unix sockets and
# shared memory, many sessions at once and many threads on one stream; and
# tests/stress/errthreads.cu (a queued call's failure reaches its own thread only).

STRESS_PROGS := $(foreach rt,$(TEST_RUNTIMES),$(call test_dir,stress,$(rt))/stress $(call test_dir,stress,$(rt))/errthreads) \
                $(BUILD)/stress/stress-ptds
E2E_TESTS += $(BUILD)/tests/check_e2e_stress

test-programs: $(STRESS_PROGS)

$(BUILD)/tests/check_e2e_stress: tests/stress/check_e2e_stress.c $(E2E_HARNESS) tests/e2e/e2e_harness.h \
		tests/unit/crm_check.h tests/stress/stress.mk $(STRESS_PROGS) | $(BUILD)/tests
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(E2E_DEFS) -o $@ $< $(E2E_HARNESS) $(LDFLAGS) $(CHECK_LIBS)

# The program links the real cuBLAS, cuBLASLt and cuDNN and the runtime $(1); the
# shim, preloaded, provides them and the runtime or the driver under it.
define STRESS_RULE
$(call test_dir,stress,$(1))/stress: tests/stress/stress.cu tests/stress/stress_work.h tests/stress/stress_layer.h
	@mkdir -p $$(dir $$@)
	$$(call TEST_NVCC,$(1)) -o $$@ $$< -L$(CUDA_HOME)/lib64 -lcublas -lcublasLt -lcudnn

$(call test_dir,stress,$(1))/errthreads: tests/stress/errthreads.cu tests/cuda/cuda_check.h
	@mkdir -p $$(dir $$@)
	$$(call TEST_NVCC,$(1)) -o $$@ $$< -L$(CUDA_HOME)/lib64 -lcublas
endef
$(foreach rt,$(TEST_RUNTIMES),$(eval $(call STRESS_RULE,$(rt))))

# Built with per-thread default streams: stream 0 is each thread's own, and every
# call goes through the *_ptsz/*_ptds entry points.
$(BUILD)/stress/stress-ptds: tests/stress/stress.cu tests/stress/stress_work.h tests/stress/stress_layer.h
	@mkdir -p $(dir $@)
	$(call TEST_NVCC,shared) --default-stream per-thread -o $@ $< -L$(CUDA_HOME)/lib64 -lcublas -lcublasLt -lcudnn
