# benchmarks.mk -- builds the benchmark programs into $(BUILD)/bench/bin and runs
# them (`make bench`): remote vs local vs raw socket, tables on stdout, bench.json,
# bench.md and PNG plots in $(BUILD)/bench (benchmarks/run-bench.py does the runs).
#
#   make bench                 the full set, about 7 minutes on 2 cores
#   make bench BENCH_QUICK=1   about 1 minute: the figures, not judged against the goals
#   make bench BENCH_FULL=1    SGEMM up to N = 8192 without a GPU too
#   make bench BENCH_ONLY=copy,shaped   only these sections
#   make bench-smoke           seconds: every benchmark program runs (not in `make test`)
#
# The shaped-link section needs root (network namespaces); without it, it says why
# it was skipped. Goals are reported as PASS/MISS lines (the default profile only,
# whose rounds are repeated and their spread shown); only a failing benchmark
# program makes the target fail.

BENCH_BIN   := $(BUILD)/bench/bin
BENCH_PROGS := $(BENCH_BIN)/bench_raw $(BENCH_BIN)/bench_cuda $(BENCH_BIN)/bench_kernel $(BENCH_BIN)/bench_graph \
               $(BENCH_BIN)/bench_managed \
               $(BENCH_BIN)/bench_cuda_static $(BENCH_BIN)/bench_ptx $(BENCH_BIN)/bench_ptx_kernels.ptx
# The kernel's CPU twin for the emulated device, once its interface exists.
ifneq ($(wildcard server/emu/cudarem_emu_kernel.h),)
BENCH_PROGS += $(BENCH_BIN)/bench_kernel_emu.so
endif
BENCH_WARN  := -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror
BENCH_ARGS  := $(if $(filter 1,$(BENCH_QUICK)),--quick) $(if $(filter 1,$(BENCH_FULL)),--full) \
               $(if $(BENCH_ONLY),--only $(BENCH_ONLY))

$(BENCH_BIN):
	mkdir -p $@

$(BENCH_BIN)/bench_raw: benchmarks/bench_raw.c | $(BENCH_BIN)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g $(SANFLAGS) -o $@ $<

$(BENCH_BIN)/bench_kernel_emu.so: benchmarks/bench_kernel_emu.c server/emu/cudarem_emu_kernel.h | $(BENCH_BIN)
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -g -fPIC -shared -I. $(SANFLAGS) -o $@ $<

$(BENCH_BIN)/%: benchmarks/%.cu | $(BENCH_BIN)
	$(NVCC) $(NVCCFLAGS) $(BENCH_WARN) -std=c++17 -o $@ $<

# The same program with nvcc's default static runtime: NVIDIA's runtime inside it
# reaches the shim through the driver layer; its latency is reported beside.
$(BENCH_BIN)/bench_cuda_static: benchmarks/bench_cuda.cu | $(BENCH_BIN)
	$(NVCC) $(subst -cudart shared,-cudart static,$(NVCCFLAGS)) $(BENCH_WARN) -std=c++17 -o $@ $< -ldl

.PHONY: bench bench-smoke bench-programs
bench-programs: $(BENCH_PROGS)

bench: $(SHIM) $(SHIM_ALIASES) $(SERVER) $(EMU_LIB) $(BENCH_PROGS) $(BUILD)/load/loadmix $(BUILD)/cuda/meminfo
ifeq ($(SAN),1)
	@echo "make bench measures the plain build: run it without SAN=1" >&2; exit 1
endif
	$(PYTHON) benchmarks/run-bench.py --build $(BUILD) --out $(BUILD)/bench $(BENCH_ARGS)

bench-smoke: $(SHIM) $(SHIM_ALIASES) $(SERVER) $(EMU_LIB) $(BENCH_PROGS) $(BUILD)/load/loadmix $(BUILD)/cuda/meminfo
	$(PYTHON) benchmarks/run-bench.py --build $(BUILD) --out $(BUILD)/bench/smoke --smoke


# The PTX engine's own benchmark: its objects (server/emu/ptx/) and its kernels' PTX.
$(BENCH_BIN)/bench_ptx: benchmarks/bench_ptx.c $(patsubst server/emu/%.c,$(BUILD)/obj/emu/%.o,$(wildcard server/emu/ptx/*.c)) | $(BENCH_BIN)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g -I. -I$(CUDA_HOME)/include $(SANFLAGS) -o $@ $< \
	    $(filter %.o,$^) -lm -lpthread

$(BENCH_BIN)/bench_ptx_kernels.ptx: benchmarks/bench_ptx_kernels.cu | $(BENCH_BIN)
	$(NVCC) -ptx -arch=sm_90 -o $@ $<
