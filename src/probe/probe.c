/* probe.c: cudamod-probe, the device query of doc/guide.md, `cudamod validate`.
 *
 * Loads the CUDA runtime, the driver, cuDNN and NCCL by soname with dlopen,
 * as a program started with the module's environment would, asks each for
 * its version (and the driver for its devices), and prints the findings as
 * one JSON document. It includes no CUDA header: the few entry points it
 * calls are declared here, with CUresult/cudaError_t/ncclResult_t as int
 * and CUdevice as int. Nothing a library returns is trusted: strings are
 * bounded and made valid UTF-8 before they reach the document.
 *
 * Behind a launcher (srun), `--env NAME=VALUE`... gives the module's
 * environment: the probe then replaces its own with those variables plus
 * what the job step set for it (CUDA_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL,
 * SLURM_*, …), and executes itself again, since the dynamic loader reads
 * LD_LIBRARY_PATH only when a program starts. The document records the
 * CUDA_VISIBLE_DEVICES it saw and the host it ran on.
 *
 * A library can crash the probe: glibc's loader faults on some truncated
 * or corrupt libraries, and a library can fault in its own code. Before
 * each dlopen and each call into a library the probe notes what it is
 * doing; on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT it writes that to
 * stderr ("cudamod-probe: SIGSEGV while loading libcudart.so.12") and dies
 * by the same signal, so that validate can say where it crashed.
 *
 * Exit status: 0 whenever the document was printed (the findings are in
 * it), 2 for usage errors, 1 when stdout cannot be written, 127 when the
 * re-execution fails. */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

#include "util.h"
#include "banned.h"

#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
/* More devices than any node has: a garbage count must not loop forever. */
#define MAX_DEVICES 1024

typedef int (*get_int_fn)(int *);
typedef const char *(*cuda_error_string_fn)(int);
typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_error_string_fn)(int, const char **);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_device_get_name_fn)(char *, int, int);
typedef int (*cu_device_get_attribute_fn)(int *, int, int);
typedef int (*cu_device_total_mem_v2_fn)(size_t *, int);
typedef int (*cu_device_total_mem_fn)(unsigned int *, int);
typedef size_t (*get_size_fn)(void);
typedef int (*get_property_fn)(int, int *);
typedef void (*get_int3_fn)(int *, int *, int *);
typedef void (*get_int64_3_fn)(int64_t *, int64_t *, int64_t *);

/* --- crashes ----------------------------------------------------------- */

/* What the probe is doing ("loading libcudart.so.12", "calling cuInit in
 * /usr/lib/x86_64-linux-gnu/libcuda.so.1"), for the crash handler. It is
 * written only between library calls, so the handler never sees it half
 * written. The library's path is that of the last successful load. */
static char step[PATH_MAX + 128];
static char loaded_path[PATH_MAX];

_printf_(1, 2) static void step_set(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(step, sizeof(step), fmt, ap);
        va_end(ap);
}

static void step_call(const char *name)
{
        step_set("calling %s in %s", name, loaded_path);
}

static void write_all(int fd, const char *s)
{
        size_t len = strlen(s);

        while (len > 0) {
                ssize_t n = write(fd, s, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return;
                s += n;
                len -= (size_t)n;
        }
}

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

/* Only async-signal-safe calls: write, strlen, raise. The handler was
 * reset to the default on entry (SA_RESETHAND) and the signal is not
 * blocked (SA_NODEFER), so raise ends the process with it. */
static void on_crash(int sig)
{
        const char *name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS"
                         : sig == SIGILL ? "SIGILL" : sig == SIGFPE ? "SIGFPE" : "SIGABRT";
        int saved = errno;

        write_all(STDERR_FILENO, "cudamod-probe: ");
        write_all(STDERR_FILENO, name);
        write_all(STDERR_FILENO, step[0] ? " while " : " outside any library call");
        write_all(STDERR_FILENO, step);
        write_all(STDERR_FILENO, "\n");
        errno = saved;
        raise(sig);
}

/* On its own stack, so that a stack overflow is reported too. */
static void crash_handler_install(void)
{
        static char altstack[64 * 1024];
        stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
        struct sigaction sa = { .sa_handler = on_crash, .sa_flags = SA_RESETHAND | SA_NODEFER };

        if (sigaltstack(&ss, NULL) == 0)
                sa.sa_flags |= SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(crash_signals); i++)
                (void)sigaction(crash_signals[i], &sa, NULL);
}

/* The errors met for one library, joined with "; " (truncated when long). */
struct errors {
        char text[2048];
        size_t len;
};

_printf_(2, 3) static void errors_add(struct errors *e, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (e->len + 3 >= sizeof(e->text))
                return;
        if (e->len > 0) {
                memcpy(e->text + e->len, "; ", 3);
                e->len += 2;
        }
        va_start(ap, fmt);
        n = vsnprintf(e->text + e->len, sizeof(e->text) - e->len, fmt, ap);
        va_end(ap);
        if (n > 0)
                e->len += (size_t)n < sizeof(e->text) - e->len ? (size_t)n : sizeof(e->text) - e->len - 1;
}

/* A JSON string for text a library handed us: NULL becomes null, invalid
 * UTF-8 and control bytes become '?'. */
static json_t *json_text(const char *s)
{
        json_t *j;
        char *copy;

        if (!s)
                return json_null();
        j = json_string(s);
        if (j)
                return j;
        copy = strdup(s);
        if (!copy)
                return json_null();
        for (char *p = copy; *p; p++)
                if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
                        *p = '?';
        j = json_string(copy);
        free(copy);
        return j ? j : json_null();
}

static void set(json_t *obj, const char *key, json_t *value)
{
        json_object_set_new(obj, key, value ? value : json_null());
}

static void set_error(json_t *obj, const struct errors *e)
{
        set(obj, "error", e->len > 0 ? json_text(e->text) : json_null());
}

/* dlopen the first of sonames that loads (RTLD_NOW|RTLD_LOCAL) and record
 * soname (when with_soname), loaded, path and realpath in obj; on failure
 * every dlerror() goes to e. */
static void *load(json_t *obj, const char *const *sonames, bool with_soname, struct errors *e)
{
        const char *tried = NULL;
        struct link_map *lm = NULL;
        void *h = NULL;

        for (size_t i = 0; sonames[i]; i++) {
                const char *msg;

                tried = sonames[i];
                step_set("loading %s", sonames[i]);
                dlerror();
                h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
                if (h)
                        break;
                msg = dlerror();
                errors_add(e, "%s", msg ? msg : "dlopen failed");
        }
        if (with_soname)
                set(obj, "soname", json_text(tried));
        set(obj, "loaded", json_boolean(h != NULL));
        if (!h) {
                set(obj, "path", json_null());
                return NULL;
        }
        /* A failed attempt before the one that loaded is no error. */
        e->len = 0;
        e->text[0] = '\0';
        snprintf(loaded_path, sizeof(loaded_path), "%s", tried);
        if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0]) {
                char *real = realpath(lm->l_name, NULL);

                snprintf(loaded_path, sizeof(loaded_path), "%s", lm->l_name);

                set(obj, "path", json_text(lm->l_name));
                set(obj, "realpath", json_text(real));
                free(real);
        } else {
                set(obj, "path", json_null());
        }
        return h;
}

static void *sym(void *h, const char *name, bool required, struct errors *e)
{
        void *p;

        step_set("looking up %s in %s", name, loaded_path);
        dlerror();
        p = dlsym(h, name);
        if (!p && required)
                errors_add(e, "missing symbol '%s'", name);
        return p;
}

static void cudart_error(struct errors *e, cuda_error_string_fn describe, const char *call, int rc)
{
        const char *text;
        char bounded[256];

        step_call("cudaGetErrorString");
        text = describe ? describe(rc) : NULL;
        if (text) {
                snprintf(bounded, sizeof(bounded), "%s", text);
                errors_add(e, "%s failed: error %d (%s)", call, rc, bounded);
        } else {
                errors_add(e, "%s failed: error %d", call, rc);
        }
}

/* The value of a cudart "int getter"; null when missing or failing, and
 * then *ret_rc (may be NULL) its error code (-1: not called). */
static json_t *cudart_int(void *h, const char *name, cuda_error_string_fn describe, struct errors *e,
                          int *ret_rc)
{
        get_int_fn f = (get_int_fn)sym(h, name, true, e);
        int v = 0, rc;

        if (ret_rc)
                *ret_rc = -1;
        if (!f)
                return json_null();
        step_call(name);
        rc = f(&v);
        if (rc != 0) {
                cudart_error(e, describe, name, rc);
                if (ret_rc)
                        *ret_rc = rc;
                return json_null();
        }
        return json_integer(v);
}

static json_t *probe_cudart(int cuda_major)
{
        static const char *const all[] = { "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", NULL };
        json_t *obj = json_object();
        struct errors e = { .len = 0 };
        char soname[32];
        const char *one[2] = { soname, NULL };
        cuda_error_string_fn describe;
        void *h;

        if (cuda_major >= 12)
                snprintf(soname, sizeof(soname), "libcudart.so.%d", cuda_major);
        else
                snprintf(soname, sizeof(soname), "libcudart.so.11.0");
        h = load(obj, cuda_major > 0 ? one : all, true, &e);
        if (h) {
                describe = (cuda_error_string_fn)sym(h, "cudaGetErrorString", false, &e);
                int rc;

                set(obj, "runtime_version", cudart_int(h, "cudaRuntimeGetVersion", describe, &e, &rc));
                /* CUDA 11's cudaRuntimeGetVersion fails without a driver
                 * (35, cudaErrorInsufficientDriver): validate then reads
                 * the version elsewhere, knowing why. */
                set(obj, "runtime_version_error", rc >= 0 ? json_integer(rc) : json_null());
                set(obj, "driver_version", cudart_int(h, "cudaDriverGetVersion", describe, &e, NULL));
                set(obj, "device_count", cudart_int(h, "cudaGetDeviceCount", describe, &e, NULL));
        }
        set_error(obj, &e);
        return obj;
}

struct driver {
        cu_error_string_fn describe;
        cu_device_get_fn device_get;
        cu_device_get_name_fn get_name;
        cu_device_get_attribute_fn get_attribute;
        cu_device_total_mem_v2_fn total_mem_v2;
        cu_device_total_mem_fn total_mem;
};

static void cu_error(struct errors *e, const struct driver *d, const char *call, int rc)
{
        const char *text = NULL;
        char bounded[256];

        step_call("cuGetErrorString");
        if (d->describe && d->describe(rc, &text) != 0)
                text = NULL;
        if (text) {
                snprintf(bounded, sizeof(bounded), "%s", text);
                errors_add(e, "%s failed: error %d (%s)", call, rc, bounded);
        } else {
                errors_add(e, "%s failed: error %d", call, rc);
        }
}

/* One device's name, compute capability and memory; fields a call fails
 * for are null (and the failure is in e). */
static json_t *probe_device(const struct driver *d, int index, struct errors *e)
{
        json_t *dev = json_object();
        char name[256];
        int cu = 0, major = -1, minor = -1, rc;

        set(dev, "index", json_integer(index));
        step_call("cuDeviceGet");
        rc = d->device_get(&cu, index);
        if (rc != 0) {
                cu_error(e, d, "cuDeviceGet", rc);
                set(dev, "name", json_null());
                set(dev, "compute_capability", json_null());
                set(dev, "memory_mib", json_null());
                return dev;
        }

        memset(name, 0, sizeof(name));
        step_call("cuDeviceGetName");
        if (!d->get_name)
                set(dev, "name", json_null());
        else if ((rc = d->get_name(name, (int)sizeof(name) - 1, cu)) != 0) {
                cu_error(e, d, "cuDeviceGetName", rc);
                set(dev, "name", json_null());
        } else {
                name[sizeof(name) - 1] = '\0';
                set(dev, "name", json_text(name));
        }

        if (d->get_attribute) {
                step_call("cuDeviceGetAttribute");
                rc = d->get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu);
                if (rc == 0)
                        rc = d->get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu);
                if (rc != 0)
                        cu_error(e, d, "cuDeviceGetAttribute", rc);
        }
        if (major >= 0 && minor >= 0) {
                char cc[32];

                snprintf(cc, sizeof(cc), "%d.%d", major, minor);
                set(dev, "compute_capability", json_text(cc));
        } else {
                set(dev, "compute_capability", json_null());
        }

        if (d->total_mem_v2) {
                size_t bytes = 0;

                step_call("cuDeviceTotalMem_v2");
                rc = d->total_mem_v2(&bytes, cu);
                if (rc != 0)
                        cu_error(e, d, "cuDeviceTotalMem_v2", rc);
                set(dev, "memory_mib", rc == 0 ? json_integer((json_int_t)(bytes >> 20)) : json_null());
        } else if (d->total_mem) {
                unsigned int bytes = 0;

                step_call("cuDeviceTotalMem");
                rc = d->total_mem(&bytes, cu);
                if (rc != 0)
                        cu_error(e, d, "cuDeviceTotalMem", rc);
                set(dev, "memory_mib", rc == 0 ? json_integer((json_int_t)(bytes >> 20)) : json_null());
        } else {
                set(dev, "memory_mib", json_null());
        }
        return dev;
}

static json_t *probe_driver(void)
{
        static const char *const sonames[] = { "libcuda.so.1", NULL };
        json_t *obj = json_object(), *devices;
        struct errors e = { .len = 0 };
        struct driver d = { 0 };
        cu_init_fn init;
        get_int_fn version, count;
        int v = 0, n = 0, rc = 0;
        void *h;

        h = load(obj, sonames, false, &e);
        if (!h) {
                set_error(obj, &e);
                return obj;
        }
        d.describe = (cu_error_string_fn)sym(h, "cuGetErrorString", false, &e);
        init = (cu_init_fn)sym(h, "cuInit", true, &e);
        version = (get_int_fn)sym(h, "cuDriverGetVersion", true, &e);
        count = (get_int_fn)sym(h, "cuDeviceGetCount", true, &e);
        d.device_get = (cu_device_get_fn)sym(h, "cuDeviceGet", true, &e);
        d.get_name = (cu_device_get_name_fn)sym(h, "cuDeviceGetName", true, &e);
        d.get_attribute = (cu_device_get_attribute_fn)sym(h, "cuDeviceGetAttribute", true, &e);
        d.total_mem_v2 = (cu_device_total_mem_v2_fn)sym(h, "cuDeviceTotalMem_v2", false, &e);
        if (!d.total_mem_v2)
                d.total_mem = (cu_device_total_mem_fn)sym(h, "cuDeviceTotalMem", true, &e);

        /* A failing cuInit is recorded; the version needs no init. */
        step_call("cuInit");
        if (init && (rc = init(0)) != 0)
                cu_error(&e, &d, "cuInit", rc);

        step_call("cuDriverGetVersion");
        if (version && (rc = version(&v)) == 0)
                set(obj, "version", json_integer(v));
        else {
                if (version)
                        cu_error(&e, &d, "cuDriverGetVersion", rc);
                set(obj, "version", json_null());
        }

        devices = json_array();
        step_call("cuDeviceGetCount");
        if (count && (rc = count(&n)) != 0) {
                cu_error(&e, &d, "cuDeviceGetCount", rc);
                n = 0;
        }
        if (n < 0 || n > MAX_DEVICES) {
                errors_add(&e, "cuDeviceGetCount returned %d devices", n);
                n = 0;
        }
        if (d.device_get)
                for (int i = 0; i < n; i++)
                        json_array_append_new(devices, probe_device(&d, i, &e));
        set(obj, "devices", devices);
        set_error(obj, &e);
        return obj;
}

static json_t *size_value(void *h, const char *name, struct errors *e)
{
        get_size_fn f = (get_size_fn)sym(h, name, true, e);

        step_call(name);
        return f ? json_integer((json_int_t)f()) : json_null();
}

static json_t *probe_cudnn(void)
{
        static const char *const sonames[] = { "libcudnn.so.9", "libcudnn.so.8", NULL };
        json_t *obj = json_object();
        struct errors e = { .len = 0 };
        void *h = load(obj, sonames, true, &e);

        if (h) {
                set(obj, "version", size_value(h, "cudnnGetVersion", &e));
                set(obj, "cudart_version", size_value(h, "cudnnGetCudartVersion", &e));
        }
        set_error(obj, &e);
        return obj;
}

static json_t *probe_nccl(void)
{
        static const char *const sonames[] = { "libnccl.so.2", NULL };
        json_t *obj = json_object();
        struct errors e = { .len = 0 };
        void *h = load(obj, sonames, true, &e);

        if (h) {
                get_int_fn f = (get_int_fn)sym(h, "ncclGetVersion", true, &e);
                int v = 0, rc = 0;

                step_call("ncclGetVersion");
                if (f && (rc = f(&v)) != 0)
                        errors_add(&e, "ncclGetVersion failed: error %d", rc);
                set(obj, "version", f && rc == 0 ? json_integer(v) : json_null());
        }
        set_error(obj, &e);
        return obj;
}

/* A library loaded on request (--library NAME=SONAME[,SONAME...]:SYMBOL:CALL),
 * its version asked by one of the calls the libraries of the CUDA stack
 * use, and reported as MAJOR*10000+MINOR*100+PATCH:
 *   property   int SYMBOL(int type, int *value) for types 0, 1, 2 (MAJOR_VERSION,
 *              MINOR_VERSION, PATCH_LEVEL of libraryPropertyType): cuSPARSELt,
 *              cuDSS; 0 is success
 *   int3       void SYMBOL(int *, int *, int *): NVSHMEM's vendor version
 *   magma      void SYMBOL(magma_int_t *, magma_int_t *, magma_int_t *):
 *              magma_int_t is 32-bit, or 64-bit in an ILP64 build; the cells
 *              are 64-bit and zeroed, so on a little-endian machine either
 *              width reads right */
#define MAX_LIBRARIES 8
#define MAX_SONAMES 4

struct library_request {
        char name[64];
        const char *sonames[MAX_SONAMES + 1];
        char soname_buf[512];
        char symbol[128];
        char call[16];
};

static bool request_name_valid(const char *s, size_t n)
{
        static const char *const taken[] = { "probe", "host", "visible_devices", "cudart", "driver", "cudnn", "nccl" };

        if (n == 0 || n >= 64)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
                        return false;
        for (size_t i = 0; i < ELEMENTSOF(taken); i++)
                if (strlen(taken[i]) == n && strncmp(s, taken[i], n) == 0)
                        return false;
        return true;
}

/* Parse NAME=SONAME[,SONAME...]:SYMBOL:CALL into r; false when malformed. */
static bool request_parse(const char *arg, struct library_request *r)
{
        const char *eq = strchr(arg, '='), *c1, *c2;
        size_t n_sonames = 0;

        *r = (struct library_request){ .name = "" };
        if (!eq || !request_name_valid(arg, (size_t)(eq - arg)))
                return false;
        memcpy(r->name, arg, (size_t)(eq - arg));
        c1 = strchr(eq + 1, ':');
        c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c1 || !c2 || c1 == eq + 1 || c2 == c1 + 1 || (size_t)(c1 - eq - 1) >= sizeof(r->soname_buf) ||
            (size_t)(c2 - c1 - 1) >= sizeof(r->symbol) || strlen(c2 + 1) >= sizeof(r->call))
                return false;
        memcpy(r->soname_buf, eq + 1, (size_t)(c1 - eq - 1));
        memcpy(r->symbol, c1 + 1, (size_t)(c2 - c1 - 1));
        memcpy(r->call, c2 + 1, strlen(c2 + 1));
        if (strcmp(r->call, "property") != 0 && strcmp(r->call, "int3") != 0 && strcmp(r->call, "magma") != 0 &&
            strcmp(r->call, "code") != 0)
                return false;
        for (char *p = r->soname_buf; p && *p;) {
                char *comma = strchr(p, ',');

                if (comma)
                        *comma = '\0';
                if (!*p || n_sonames == MAX_SONAMES || strchr(p, '/'))
                        return false;
                r->sonames[n_sonames++] = p;
                p = comma ? comma + 1 : NULL;
        }
        return n_sonames > 0;
}

static json_t *probe_request(const struct library_request *r)
{
        json_t *obj = json_object();
        struct errors e = { .len = 0 };
        void *h = load(obj, r->sonames, true, &e);
        long long v[3] = { -1, -1, -1 };

        if (h) {
                void *f = sym(h, r->symbol, true, &e);

                step_call(r->symbol);
                if (f && strcmp(r->call, "property") == 0) {
                        for (int type = 0; type < 3; type++) {
                                int value = -1, rc = ((get_property_fn)f)(type, &value);

                                if (rc != 0) {
                                        errors_add(&e, "%s(%d) failed: error %d", r->symbol, type, rc);
                                        break;
                                }
                                v[type] = value;
                        }
                } else if (f && strcmp(r->call, "int3") == 0) {
                        int a = -1, b = -1, c = -1;

                        ((get_int3_fn)f)(&a, &b, &c);
                        v[0] = a, v[1] = b, v[2] = c;
                } else if (f && strcmp(r->call, "code") == 0) {
                        /* size_t f(void): MAJOR*10000+MINOR*100+PATCH
                         * (cutensorGetVersion). */
                        size_t code = ((get_size_fn)f)();

                        v[0] = (long long)(code / 10000), v[1] = (long long)(code / 100 % 100), v[2] = (long long)(code % 100);
                } else if (f) {
                        int64_t a = 0, b = 0, c = 0;

                        ((get_int64_3_fn)f)(&a, &b, &c);
                        v[0] = a, v[1] = b, v[2] = c;
                }
                if (v[0] >= 0 && v[1] >= 0 && v[1] <= 99 && v[2] >= 0 && v[2] <= 99 && v[0] <= 9999)
                        set(obj, "version", json_integer(v[0] * 10000 + v[1] * 100 + v[2]));
                else {
                        if (f && e.len == 0)
                                errors_add(&e, "%s gave no version (%lld, %lld, %lld)", r->symbol, v[0], v[1], v[2]);
                        set(obj, "version", json_null());
                }
        } else {
                set(obj, "version", json_null());
        }
        set_error(obj, &e);
        return obj;
}

static void usage(FILE *f)
{
        fputs("usage: cudamod-probe [--cuda-major N] [--no-cudnn] [--no-nccl] [--no-driver]\n"
              "                     [--library NAME=SONAME[,SONAME...]:SYMBOL:property|int3|magma|code]...\n"
              "                     [--env NAME=VALUE]...\n", f);
}

/* What a job step sets for the program it runs, kept through --env. */
static bool step_variable(const char *entry)
{
        static const char *const names[] = { "CUDA_VISIBLE_DEVICES=", "GPU_DEVICE_ORDINAL=",
                                             "ROCR_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES=",
                                             "CUDA_DEVICE_ORDER=", "SLURM_" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strncmp(entry, names[i], strlen(names[i])) == 0)
                        return true;
        return false;
}

/* How this process was started before argv[0]: the dynamic loader and
 * its options when it was run as `ld.so [OPTIONS] PROBE ...` (the kernel's
 * command line still has them; ld.so moved argv past them). Fills *ret
 * (pointers into a buffer owned by *buf) and returns their count. */
static size_t loader_prefix(const char *argv0, char **buf, char ***ret)
{
        FILE *f = fopen("/proc/self/cmdline", "re");
        size_t len = 0, n = 0, k = 0;
        char **items;

        *buf = NULL;
        *ret = NULL;
        if (!f)
                return 0;
        *buf = malloc(1 << 20);
        if (*buf)
                len = fread(*buf, 1, (1 << 20) - 1, f);
        fclose(f);
        if (!*buf || len == 0)
                return 0;
        (*buf)[len] = '\0';
        for (size_t i = 0; i < len; i++)
                n += (*buf)[i] == '\0';
        items = calloc(n + 1, sizeof(*items));
        if (!items)
                return 0;
        for (size_t i = 0; i < len && k < n; i += strlen(*buf + i) + 1) {
                if (strcmp(*buf + i, argv0) == 0)
                        break;
                items[k++] = *buf + i;
        }
        if (k == n) /* argv[0] not found: no prefix to keep */
                k = 0;
        *ret = items;
        return k;
}

/* Execute the probe again, the way it was started, with args
 * (NULL-terminated) and the environment env (n entries given with --env)
 * plus the step's variables. Returns only on failure. */
static int reexec(char **args, size_t n_args, char **env, size_t n)
{
        extern char **environ;
        size_t total = n, n_prefix;
        char **envp, **argv, **prefix, *buf;

        for (char **e = environ; *e; e++)
                total++;
        envp = calloc(total + 1, sizeof(*envp));
        n_prefix = loader_prefix(args[0], &buf, &prefix);
        argv = calloc(n_prefix + n_args + 1, sizeof(*argv));
        if (!envp || !argv)
                return 127;
        total = 0;
        for (char **e = environ; *e; e++)
                if (step_variable(*e))
                        envp[total++] = *e;
        for (size_t i = 0; i < n; i++) {
                size_t len = strcspn(env[i], "=") + 1;
                bool taken = false;

                /* The step's allocation wins over a module's setting. */
                for (size_t k = 0; k < total && !taken; k++)
                        taken = strncmp(envp[k], env[i], len) == 0;
                if (!taken)
                        envp[total++] = env[i];
        }
        envp[total] = NULL;
        memcpy(argv, prefix, n_prefix * sizeof(*argv));
        memcpy(argv + n_prefix, args, n_args * sizeof(*argv));
        execve("/proc/self/exe", argv, envp);
        if (n_prefix == 0)
                execve(args[0], args, envp);
        fprintf(stderr, "cudamod-probe: cannot execute itself again: %s\n", strerror(errno));
        free(envp);
        free(argv);
        free(prefix);
        free(buf);
        return 127;
}

int main(int argc, char **argv)
{
        static const struct option options[] = {
                { "cuda-major", required_argument, NULL, 'm' },
                { "no-cudnn", no_argument, NULL, 'c' },
                { "no-nccl", no_argument, NULL, 'n' },
                { "no-driver", no_argument, NULL, 'd' },
                { "env", required_argument, NULL, 'e' },
                { "library", required_argument, NULL, 'l' },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        bool cudnn = true, nccl = true, driver = true;
        struct library_request requests[MAX_LIBRARIES];
        size_t n_requests = 0;
        int cuda_major = 0, c, r;
        _cleanup_free_ char **env = calloc((size_t)argc + 1, sizeof(*env));
        _cleanup_free_ char **args = calloc(2 * (size_t)argc + 2, sizeof(*args));
        size_t n_env = 0, n_args = 0;
        char host[256];
        json_t *doc;

        if (!env || !args)
                return 1;
        args[n_args++] = argv[0];

        opterr = 0;
        while ((c = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
                switch (c) {
                case 'm': {
                        char *end;
                        long v;

                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno || end == optarg || *end || v < 11 || v > 999) {
                                fprintf(stderr, "cudamod-probe: invalid CUDA major '%s'\n", optarg);
                                usage(stderr);
                                return 2;
                        }
                        cuda_major = (int)v;
                        args[n_args++] = (char *)"--cuda-major";
                        args[n_args++] = optarg;
                        break;
                }
                case 'c':
                        cudnn = false;
                        args[n_args++] = (char *)"--no-cudnn";
                        break;
                case 'n':
                        nccl = false;
                        args[n_args++] = (char *)"--no-nccl";
                        break;
                case 'd':
                        driver = false;
                        args[n_args++] = (char *)"--no-driver";
                        break;
                case 'l':
                        if (n_requests == MAX_LIBRARIES || !request_parse(optarg, &requests[n_requests])) {
                                fprintf(stderr, "cudamod-probe: --library wants NAME=SONAME[,SONAME...]:SYMBOL:CALL "
                                                "(at most %d), not '%s'\n", MAX_LIBRARIES, optarg);
                                usage(stderr);
                                return 2;
                        }
                        for (size_t i = 0; i < n_requests; i++)
                                if (strcmp(requests[i].name, requests[n_requests].name) == 0) {
                                        fprintf(stderr, "cudamod-probe: --library '%s' given twice\n",
                                                requests[i].name);
                                        return 2;
                                }
                        n_requests++;
                        args[n_args++] = (char *)"--library";
                        args[n_args++] = optarg;
                        break;
                case 'e':
                        if (!strchr(optarg, '=') || optarg[0] == '=') {
                                fprintf(stderr, "cudamod-probe: --env wants NAME=VALUE, not '%s'\n", optarg);
                                usage(stderr);
                                return 2;
                        }
                        env[n_env++] = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
                case ':':
                        fprintf(stderr, "cudamod-probe: option '%s' needs a value\n", argv[optind - 1]);
                        usage(stderr);
                        return 2;
                default:
                        fprintf(stderr, "cudamod-probe: unknown option '%s'\n", argv[optind - 1]);
                        usage(stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "cudamod-probe: unexpected argument '%s'\n", argv[optind]);
                usage(stderr);
                return 2;
        }

        if (n_env)
                return reexec(args, n_args, env, n_env);

        crash_handler_install();
        doc = json_object();
        set(doc, "probe", json_integer(1));
        set(doc, "host", json_text(gethostname(host, sizeof(host)) == 0 ? (host[sizeof(host) - 1] = '\0', host) : NULL));
        set(doc, "visible_devices", json_text(getenv("CUDA_VISIBLE_DEVICES")));
        set(doc, "cudart", probe_cudart(cuda_major));
        if (driver)
                set(doc, "driver", probe_driver());
        if (cudnn)
                set(doc, "cudnn", probe_cudnn());
        if (nccl)
                set(doc, "nccl", probe_nccl());
        for (size_t i = 0; i < n_requests; i++)
                set(doc, requests[i].name, probe_request(&requests[i]));
        step[0] = '\0';

        r = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(doc);
        if (r < 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "cudamod-probe: cannot write to stdout\n");
                return 1;
        }
        return 0;
}
