/* crm_loader_stub.c -- the body of build/lib/libcuda.so.1 and libnvidia-ml.so.1:
 * nothing. They exist for their SONAMEs, which libcudarem.so depends on, so that
 * once the shim is loaded those names resolve to it (interpose/interpose.mk). */
int crm_loader_stub_marker;
