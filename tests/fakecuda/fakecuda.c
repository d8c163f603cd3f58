/* fakecuda.c: a stand-in driver, libcuda.so.1, for the probe's tests. Its
 * answers are fixed at build time: FAKE_DRIVER_VERSION, and FAKE_DEVICES, a
 * list of `{ name, cc major, cc minor, MiB },` rows (empty: no device).
 * With FAKE_NO_TOTALMEM_V2 only the old 32-bit cuDeviceTotalMem exists.
 *
 * With FAKE_BY_PARTITION the devices depend on where the process runs, for
 * the Slurm tests (tests/slurm): cuInit reads SLURM_JOB_PARTITION (a100: two
 * Fake A100, h100: two Fake H100, hang: cuInit never returns, anything else
 * or unset: no device) and then, like the real driver, CUDA_VISIBLE_DEVICES
 * (unset: all; otherwise a comma list of ordinals, renumbered from 0; the
 * list stops at the first entry that is not a valid ordinal, so "" hides
 * every device).
 *
 * With FAKE_CRASH_IN_GET_NAME cuDeviceGetName dies of SIGSEGV, as a broken
 * driver would. */
#include <signal.h>
#include <stddef.h>
#include <string.h>
#ifdef FAKE_BY_PARTITION
#include <stdlib.h>
#include <unistd.h>
#endif

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

#ifdef FAKE_BY_PARTITION
#define MAX_DEVICES 8
/* What the partition's node has; devices[] is what this process sees. */
static const struct fake_device node_a100[] = {
        { "Fake A100", 8, 0, 40536 }, { "Fake A100", 8, 0, 40536 }, { NULL, 0, 0, 0 } };
static const struct fake_device node_h100[] = {
        { "Fake H100", 9, 0, 81559 }, { "Fake H100", 9, 0, 81559 }, { NULL, 0, 0, 0 } };
static const struct fake_device node_none[] = { { NULL, 0, 0, 0 } };
static struct fake_device devices[MAX_DEVICES + 1];
#else
static const struct fake_device devices[] = { FAKE_DEVICES { NULL, 0, 0, 0 } };
#endif
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

#ifdef FAKE_BY_PARTITION
/* Fill devices[] from the node's devices and CUDA_VISIBLE_DEVICES. */
static void select_devices(const struct fake_device *node)
{
        const char *v = getenv("CUDA_VISIBLE_DEVICES");
        int on_node = 0, n = 0;

        while (node[on_node].name)
                on_node++;
        memset(devices, 0, sizeof(devices));
        if (!v) {
                for (; n < on_node && n < MAX_DEVICES; n++)
                        devices[n] = node[n];
                return;
        }
        while (*v && n < MAX_DEVICES) {
                char *end;
                long i = strtol(v, &end, 10);

                if (end == v || (*end && *end != ',') || i < 0 || i >= on_node)
                        break;
                devices[n++] = node[i];
                v = *end ? end + 1 : end;
        }
}
#endif

int cuInit(unsigned int flags)
{
        if (flags != 0)
                return CUDA_ERROR_INVALID_VALUE;
#ifdef FAKE_BY_PARTITION
        {
                const char *p = getenv("SLURM_JOB_PARTITION");

                if (p && strcmp(p, "hang") == 0)
                        for (;;)
                                pause();
                select_devices(p && strcmp(p, "a100") == 0   ? node_a100
                               : p && strcmp(p, "h100") == 0 ? node_h100
                                                             : node_none);
        }
#endif
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

#ifdef FAKE_CRASH_IN_GET_NAME
        raise(SIGSEGV);
#endif
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
