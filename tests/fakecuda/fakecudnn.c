/* fakecudnn.c: a stand-in libcudnn.so.N for the probe's tests, with its
 * versions fixed at build time (FAKE_CUDNN_VERSION, FAKE_CUDART_VERSION). */
#include <stddef.h>

size_t cudnnGetVersion(void);
size_t cudnnGetCudartVersion(void);

size_t cudnnGetVersion(void)
{
        return FAKE_CUDNN_VERSION;
}

size_t cudnnGetCudartVersion(void)
{
        return FAKE_CUDART_VERSION;
}
