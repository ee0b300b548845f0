/* fake_cudnn.c -- a stand-in for NVIDIA's cuDNN (build/driver/fake/libcudnn.so.9)
 * that the shim's fallback loads when CUDAREM_NVIDIA_LIBS points at it: it hands out
 * a handle of its own, records the stream it is given, and checks the arguments of
 * the backend calls it answers. A call taking the shim's own legacy descriptors
 * must never reach it. What it saw is written, when a handle is destroyed, to the
 * file FAKE_CUDNN_REPORT names. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FAKE_HANDLE ((void *)(uintptr_t)0xfa4ed001u)

static int creates, executes, wrongly_reached, handle_attrs;
static void *stream;

int cudnnCreate(void **handle)
{
    *handle = FAKE_HANDLE;
    creates++;
    return 0;
}

int cudnnSetStream(void *handle, void *s)
{
    if (handle != FAKE_HANDLE)
        return 2000;
    stream = s;
    return 0;
}

int cudnnBackendExecute(void *handle, void *plan, void *variant_pack)
{
    if (handle != FAKE_HANDLE)
        return 2001;
    if (plan != (void *)(uintptr_t)0x1111 || variant_pack != (void *)(uintptr_t)0x2222)
        return 2002;
    executes++;
    return 0;
}

/* An operation graph's handle attribute must be this library's own handle. */
int cudnnBackendSetAttribute(void *desc, int name, int type, int64_t count, const void *elements)
{
    (void)desc, (void)name;
    if (type == 0 /* CUDNN_TYPE_HANDLE */) {
        if (count != 1 || *(void *const *)elements != FAKE_HANDLE)
            return 2003;
        handle_attrs++;
    }
    return 0;
}

int cudnnGetRNNWeightSpaceSize(void *handle, void *rnn_desc, size_t *size)
{
    (void)handle, (void)rnn_desc, (void)size;
    wrongly_reached++;
    return 0;
}

int cudnnDestroy(void *handle)
{
    if (handle != FAKE_HANDLE)
        return 2000;
    const char *path = getenv("FAKE_CUDNN_REPORT");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (f != NULL) {
        fprintf(f, "%d %d %d %d %p\n", creates, executes, wrongly_reached, handle_attrs, stream);
        fclose(f);
    }
    return 0;
}
