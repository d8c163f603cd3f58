/* fakecuda.c: a stand-in driver, libcuda.so.1, for the probe's tests. Its
 * answers are fixed at build time: FAKE_DRIVER_VERSION, and FAKE_DEVICES, a
 * list of `{ name, cc major, cc minor, MiB },` rows (empty: no device).
 * With FAKE_NO_TOTALMEM_V2 only the old 32-bit cuDeviceTotalMem exists. */
#include <stddef.h>
#include <string.h>

#ifndef FAKE_DRIVER_VERSION
#error "FAKE_DRIVER_VERSION must be defined"
#endif
#ifndef FAKE_DEVICES
#define FAKE_DEVICES
#endif

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_INVALID_DEVICE 101

struct fake_device {
        const char *name;
        int major, minor;
        unsigned long long mib;
};

static const struct fake_device devices[] = { FAKE_DEVICES { NULL, 0, 0, 0 } };
static int initialised;

int cuInit(unsigned int flags);
int cuDriverGetVersion(int *v);
int cuDeviceGetCount(int *n);
int cuDeviceGet(int *dev, int ordinal);
int cuDeviceGetName(char *name, int len, int dev);
int cuDeviceGetAttribute(int *v, int attr, int dev);
int cuGetErrorString(int e, const char **s);
#ifndef FAKE_NO_TOTALMEM_V2
int cuDeviceTotalMem_v2(size_t *bytes, int dev);
#endif
int cuDeviceTotalMem(unsigned int *bytes, int dev);

static int count(void)
{
        int n = 0;

        while (devices[n].name)
                n++;
        return n;
}

int cuInit(unsigned int flags)
{
        if (flags != 0)
                return CUDA_ERROR_INVALID_VALUE;
        initialised = 1;
        return CUDA_SUCCESS;
}

int cuDriverGetVersion(int *v)
{
        *v = FAKE_DRIVER_VERSION;
        return CUDA_SUCCESS;
}

int cuDeviceGetCount(int *n)
{
        if (!initialised)
                return CUDA_ERROR_NOT_INITIALIZED;
        *n = count();
        return CUDA_SUCCESS;
}

int cuDeviceGet(int *dev, int ordinal)
{
        if (ordinal < 0 || ordinal >= count())
                return CUDA_ERROR_INVALID_DEVICE;
        *dev = ordinal;
        return CUDA_SUCCESS;
}

int cuDeviceGetName(char *name, int len, int dev)
{
        size_t n;

        if (dev < 0 || dev >= count() || len <= 0)
                return CUDA_ERROR_INVALID_VALUE;
        n = strlen(devices[dev].name);
        if (n >= (size_t)len)
                n = (size_t)len - 1;
        memcpy(name, devices[dev].name, n);
        name[n] = '\0';
        return CUDA_SUCCESS;
}

int cuDeviceGetAttribute(int *v, int attr, int dev)
{
        if (dev < 0 || dev >= count())
                return CUDA_ERROR_INVALID_DEVICE;
        if (attr == 75)
                *v = devices[dev].major;
        else if (attr == 76)
                *v = devices[dev].minor;
        else
                return CUDA_ERROR_INVALID_VALUE;
        return CUDA_SUCCESS;
}

int cuGetErrorString(int e, const char **s)
{
        *s = e == CUDA_ERROR_NOT_INITIALIZED ? "initialization error" : "unknown error";
        return CUDA_SUCCESS;
}

#ifndef FAKE_NO_TOTALMEM_V2
int cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
        if (dev < 0 || dev >= count())
                return CUDA_ERROR_INVALID_DEVICE;
        *bytes = (size_t)(devices[dev].mib << 20);
        return CUDA_SUCCESS;
}
#endif

int cuDeviceTotalMem(unsigned int *bytes, int dev)
{
        if (dev < 0 || dev >= count())
                return CUDA_ERROR_INVALID_DEVICE;
        *bytes = (unsigned int)(devices[dev].mib << 20);
        return CUDA_SUCCESS;
}
