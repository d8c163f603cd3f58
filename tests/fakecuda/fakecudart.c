/* fakecudart.c: a stand-in libcudart.so.N for the probe's tests. The
 * runtime version is fixed at build time (FAKE_RUNTIME_VERSION); like the
 * real runtime it asks the driver, libcuda.so.1, for the driver version and
 * the devices, and reports an insufficient driver when there is none.
 * With FAKE_VERSION_NEEDS_DRIVER cudaRuntimeGetVersion does too, as CUDA
 * 11's real one does (error 35 without a driver). */
#include <dlfcn.h>
#include <stddef.h>

#ifndef FAKE_RUNTIME_VERSION
#error "FAKE_RUNTIME_VERSION must be defined"
#endif

#define CUDA_ERROR_INSUFFICIENT_DRIVER 35

int cudaRuntimeGetVersion(int *v);
int cudaDriverGetVersion(int *v);
int cudaGetDeviceCount(int *n);
const char *cudaGetErrorString(int e);

/* Call the driver's int getter name, after cuInit(0) as the real runtime
 * does; -1 when there is no driver or no such entry point. */
static int driver_call(const char *name, int *v)
{
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        int (*init)(unsigned int);
        int (*f)(int *);

        if (!h)
                return -1;
        *(void **)&init = dlsym(h, "cuInit");
        *(void **)&f = dlsym(h, name);
        if (!init || !f || init(0) != 0)
                return -1;
        return f(v);
}

int cudaRuntimeGetVersion(int *v)
{
#ifdef FAKE_VERSION_NEEDS_DRIVER
        int driver;

        if (driver_call("cuDriverGetVersion", &driver) != 0)
                return CUDA_ERROR_INSUFFICIENT_DRIVER;
#endif
        *v = FAKE_RUNTIME_VERSION;
        return 0;
}

int cudaDriverGetVersion(int *v)
{
        if (driver_call("cuDriverGetVersion", v) != 0)
                *v = 0;
        return 0;
}

int cudaGetDeviceCount(int *n)
{
        int version = 0;

        if (driver_call("cuDriverGetVersion", &version) != 0 || version < FAKE_RUNTIME_VERSION / 1000 * 1000) {
                *n = 0;
                return CUDA_ERROR_INSUFFICIENT_DRIVER;
        }
        return driver_call("cuDeviceGetCount", n) == 0 ? 0 : 100;
}

const char *cudaGetErrorString(int e)
{
        return e == CUDA_ERROR_INSUFFICIENT_DRIVER ? "CUDA driver version is insufficient for CUDA runtime version"
                                                   : "unknown error";
}
