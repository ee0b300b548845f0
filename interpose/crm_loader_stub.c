/* crm_loader_stub.c -- the body of build/lib/libcuda.so.1 and libnvidia-ml.so.1:
 * nothing. They exist for their SONAMEs, which libcudarem.so depends on, so that
 * once the shim is loaded those names resolve to it (interpose/interpose.mk). They
 * define no symbol: two libraries defining one would clash. */
typedef int crm_loader_stub_empty; /* a translation unit must declare something */
