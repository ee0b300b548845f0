# Makefile -- builds cudarem: the shim (libcudarem.so), the daemon (cudarem-server),
# the CPU-emulated device (libcudarem-emu.so), cudarem-smi; and, for `make test`,
# the tests and their CUDA programs.
#
#   make            the product into build/: shim (and its lib/), daemon, emulated
#                   device, cudarem-smi
#   make test-programs  what the tests need besides (nvcc programs, suites, examples)
#   make test       builds both, runs unit + end-to-end suites, then the same under ASan/UBSan
#   make SAN=1 ...  build into build-san/ with AddressSanitizer + UBSan
#   make SAN=thread test-tsan   the client side with ThreadSanitizer (build-tsan/)
#   make install    install into PREFIX (default /usr/local; packaging/install.mk)
#   make gpu-bundle / gpu-check / gpu-check-dry   the GPU run (tools/gpu.mk)

CC        ?= gcc
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
PYTHON    ?= python3
SAN       ?= 0

ifeq ($(SAN),1)
BUILD     := build-san
SANFLAGS  := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else ifeq ($(SAN),thread)
BUILD     := build-tsan
SANFLAGS  := -fsanitize=thread -fno-omit-frame-pointer
else
BUILD     := build
SANFLAGS  :=
endif
GEN       := $(BUILD)/gen

CFLAGS    := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g -fPIC $(SANFLAGS) \
             -I. -I$(GEN) -I$(CUDA_HOME)/include -I/usr/include/tirpc
LDFLAGS   := $(SANFLAGS) -lzstd -lssl -lcrypto
NVCC_OPT  := -O2 -Wno-deprecated-gpu-targets
NVCCFLAGS := -cudart shared $(NVCC_OPT)
# nvcc linking the CUDA runtime as $(1): shared (the shim, preloaded, takes the place
# of libcudart.so.13) or static (NVIDIA's runtime inside the program dlopens
# libcuda.so.1 and gets the shim's driver layer).
nvcc_rt = $(NVCC) -cudart $(1) $(NVCC_OPT)

.PHONY: all test-programs test clean
all:
test-programs: all

include common/common.mk
include common/util.mk
include server/emu/emu.mk
include protocol/protocol.mk
include client/client.mk
include interpose/interpose.mk
include server/server.mk
include examples/examples.mk
include benchmarks/benchmarks.mk
include tests/tests.mk
include packaging/install.mk
include tools/gpu.mk

$(BUILD) $(GEN) $(BUILD)/obj:
	mkdir -p $@

clean:
	rm -rf build build-san build-tsan
