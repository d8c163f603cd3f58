/* validate-probe.c: the build, run and device checks of `cudamod validate`
 * (doc/guide.md, `cudamod validate`).
 *
 * Both the C compiler and cudamod-probe are started with the module's
 * environment only (t->env), by fork and execve, in a process group of
 * their own that is killed whole at the timeout; their stdout and stderr
 * are read through pipes, each kept to OUTPUT_MAX bytes. Programs are looked
 * up in the PATH of that environment, never in ours. Everything the child
 * needs is prepared before fork, so the child calls only async-signal-safe
 * functions (validate may run modules in parallel threads). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "validate-probe.h"
#include "component-table.h"
#include "diag.h"
#include "libfile.h"
#include "process.h"
#include "strbuf.h"
#include "toolchain.h"
#include "util-file.h"
#include "util.h"
#include "validate-check.h"
#include "version.h"
#include "banned.h"

#define HEADER_HEAD (64 * 1024)
#define DEFAULT_TIMEOUT 120
/* More devices than any node has: a garbage document must not allocate much. */
#define MAX_DEVICES 1024
/* How much of a failing program's stderr a message quotes. */
#define TAIL_LINES 5
#define TAIL_BYTES 600

/* The CUDA runtime's report: the toolkit's library. */
static const struct probe_library *runtime_of(const struct probe_report *p)
{
        return &p->libs[component_toolkit()->index];
}

/* env with LD_LIBRARY_PATH extended by extra_libdir (when not NULL); entries
 * without '=' are dropped. */
static void env_build(char *const *env, const char *extra_libdir, struct strv *ret)
{
        bool seen = false;

        for (char *const *e = env; e && *e; e++) {
                if (!strchr(*e, '='))
                        continue;
                if (extra_libdir && startswith(*e, "LD_LIBRARY_PATH=")) {
                        const char *v = *e + strlen("LD_LIBRARY_PATH=");

                        seen = true;
                        strv_push(ret, *v ? xasprintf("%s:%s", *e, extra_libdir)
                                          : xasprintf("LD_LIBRARY_PATH=%s", extra_libdir));
                        continue;
                }
                strv_add(ret, *e);
        }
        if (extra_libdir && !seen)
                strv_push(ret, xasprintf("LD_LIBRARY_PATH=%s", extra_libdir));
}

/* An argv or envp for execve: never NULL, even for an empty strv. */
static char *const *strv_exec(const struct strv *v)
{
        static char *const empty[] = { NULL };

        return v->items ? v->items : empty;
}

/* The last TAIL_LINES lines of text (at most TAIL_BYTES), trimmed and made
 * valid UTF-8, newlines kept; newly allocated ("" when empty). */
static char *text_tail(const char *text, size_t len)
{
        _cleanup_free_ char *cut = NULL;
        size_t end = len, start;
        unsigned lines = 0;

        while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' '))
                end--;
        start = end;
        while (start > 0 && end - start < TAIL_BYTES) {
                if (text[start - 1] == '\n' && ++lines >= TAIL_LINES)
                        break;
                start--;
        }
        /* A cut line is marked; the cut may split a UTF-8 sequence, which
         * utf8_sanitize then replaces. */
        cut = start > 0 && text[start - 1] != '\n' ? xasprintf("…%.*s", (int)(end - start), text + start)
                                                   : xstrndup(text + start, end - start);
        return utf8_sanitize(cut);
}

/* --- headers and versions ---------------------------------------------- */

/* "12.4 (12040)" */
static char *code_string(const struct component *c, long code)
{
        struct version v = c->code_version(code);
        _cleanup_free_ char *s = version_to_string(&v, 0);

        return xasprintf("%s (%ld)", s, code);
}

/* The highest N of the libcudart.so.N[...] files in dir; 0 when none. */
static unsigned long dir_cudart_major(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        unsigned long major = 0;

        if (!d)
                return 0;
        while ((de = readdir(d))) {
                struct version v;

                if (soname_version_parse(de->d_name, "libcudart", &v) == 0 && v.n[0] > major)
                        major = v.n[0];
        }
        closedir(d);
        return major;
}

/* The CUDA major the probe should load the runtime of: a cuda module's
 * from its runtime header (or its libcudart.so.N), another module's from
 * the first libcudart.so.N on its LD_LIBRARY_PATH; 0 when unknown. */
static unsigned long module_cuda_major(const struct validate_module *t)
{
        const struct component *toolkit = component_toolkit();
        const struct strv *dirs = t->kind == toolkit ? &t->own_libdirs : &t->ld_library_path;

        if (t->kind == toolkit) {
                _cleanup_free_ char *file = NULL;
                long code;

                if (component_header_version(&t->own_incdirs, toolkit, &code, &file) == 0)
                        return toolkit->code_version(code).n[0];
        }
        for (size_t i = 0; i < dirs->len; i++) {
                unsigned long m = dir_cudart_major(dirs->items[i]);

                if (m > 0)
                        return m;
        }
        return 0;
}

/* --- build ------------------------------------------------------------- */

void check_build(const struct validate_module *t, const struct validate_options *o, struct check *ret)
{
        const struct component_build_check *k = t->kind ? &t->kind->build : NULL;
        const char *cc = k && k->cplusplus ? (o->cxx ? o->cxx : "c++") : o->cc ? o->cc : "cc";
        const char *source = k && k->cplusplus ? "cudamod-build.cpp" : "cudamod-build.c";
        unsigned timeout = o->timeout ? o->timeout : DEFAULT_TIMEOUT;
        _cleanup_(validate_scratch_removep) char *dir = NULL;
        _cleanup_free_ char *cc_path = NULL, *search = NULL, *libs = NULL, *ending = NULL, *errors = NULL,
                            *owned_hint = NULL;
        const char *missing;
        _cleanup_(strv_release) struct strv argv = { 0 }, env = { 0 };
        _cleanup_(child_release) struct child c = { .out = STRBUF_INIT, .err = STRBUF_INIT };
        const char *hint;
        int r, err = 0;

        ret->id = "build";
        if (!o->compile) {
                check_set(ret, CHECK_SKIP, "the build check was not asked for");
                return;
        }
        if (t->runtime) {
                check_set(ret, CHECK_SKIP,
                          "runtime-only: no header; a build cannot use it (the install has no %s of its own and "
                          "its module sets only the loader path)",
                          k && k->header ? k->header : "header");
                return;
        }
        if (!k || !k->program) {
                _cleanup_free_ char *labels = component_list(COMPONENT_FIELD_LABEL, " or ");

                check_set(ret, CHECK_SKIP, "not a %s module: nothing to build against", labels);
                return;
        }
        search = xasprintf("PATH=%s", o->cc_path ? o->cc_path : "/usr/bin:/bin");
        cc_path = process_find_program(cc, (char *[]){ search, NULL }, &err);
        if (!cc_path) {
                check_set(ret, CHECK_SKIP, "no C compiler: '%s' is not in cudamod's PATH (%s): %s", cc,
                          search + 5, err == EACCES ? "it is not executable" : "install one or name another");
                return;
        }

        dir = validate_scratch_new("build", ret);
        if (!dir || validate_scratch_write(dir, source, k->program, ret) < 0)
                return;

        strv_add(&argv, cc);
        strv_add(&argv, "-o");
        strv_add(&argv, "cudamod-build");
        strv_add(&argv, source);
        for (size_t i = 0; k->libs[i]; i++)
                strv_add(&argv, k->libs[i]);
        /* The compiler's own programs come from cudamod's PATH too. */
        for (char *const *e = t->env; e && *e; e++)
                if (strchr(*e, '=') && !startswith(*e, "PATH="))
                        strv_add(&env, *e);
        strv_add(&env, search);
        libs = k->libs[1] ? xasprintf("%s %s", k->libs[0], k->libs[1]) : xstrdup(k->libs[0]);

        r = process_run(cc_path, strv_exec(&argv), strv_exec(&env), dir, timeout, &c);
        if (r < 0) {
                check_set(ret, CHECK_FAIL, "cannot start '%s': %s", cc_path, strerror(-r));
                return;
        }
        if (c.exec_errno) {
                check_set(ret, CHECK_FAIL, "the C compiler '%s' could not be started: %s", cc_path,
                          strerror(c.exec_errno));
                return;
        }
        if (c.timed_out) {
                _cleanup_free_ char *strays = child_strays_string(&c);

                check_set(ret, CHECK_FAIL, "the C compiler '%s' timed out after %u s, killed%s", cc_path,
                          timeout, strays);
                return;
        }
        if (child_succeeded(&c)) {
                check_set(ret, CHECK_PASS,
                          "a program including %s compiles and links with %s using only the module's CPATH and LIBRARY_PATH ('%s')",
                          k->header, libs, cc_path);
                return;
        }

        if ((missing = strstr(c.err.buf, "cannot find -l"))) {
                size_t n;

                missing += strlen("cannot find -l");
                n = strspn(missing, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-.");
                hint = owned_hint = xasprintf(
                        "LIBRARY_PATH does not reach lib%.*s.so (the development link): add the module's library directory (or its dependency's) to LIBRARY_PATH",
                        (int)n, missing);
        } else if (strstr(c.err.buf, ".h: No such file") || strstr(c.err.buf, ".h: no such file"))
                hint = "CPATH does not reach a header: add the module's include directory (and its CUDA dependency's) to CPATH";
        else
                hint = "see the compiler's messages";
        ending = child_ending(&c);
        errors = validate_compiler_errors(c.err.len ? c.err.buf : c.out.buf, TAIL_LINES);
        check_set(ret, CHECK_FAIL,
                  "a program including %s does not build with %s using the module's CPATH and LIBRARY_PATH ('%s', %s): %s%s",
                  k->header, libs, cc_path, ending, hint, errors);
}

/* --- the probe --------------------------------------------------------- */

static void probe_library_release(struct probe_library *l)
{
        free(l->soname);
        free(l->path);
        free(l->error);
        *l = (struct probe_library){ .version = -1, .cudart_version = -1 };
}

void probe_report_release(struct probe_report *r)
{
        free(r->launch_error);
        for (size_t i = 0; i < N_COMPONENTS; i++)
                probe_library_release(&r->libs[i]);
        free(r->runtime_device_error);
        free(r->driver_path);
        free(r->driver_error);
        for (size_t i = 0; i < r->n_devices; i++) {
                free(r->devices[i].name);
                free(r->devices[i].compute_capability);
        }
        free(r->devices);
        free(r->visible_devices);
        free(r->host);
        *r = (struct probe_report){
                .runtime_driver_version = -1,
                .runtime_device_count = -1,
                .driver_version = -1,
        };
        for (size_t i = 0; i < N_COMPONENTS; i++)
                r->libs[i] = (struct probe_library){ .version = -1, .cudart_version = -1 };
}

static long json_long(json_t *obj, const char *key)
{
        json_t *j = json_object_get(obj, key);

        return json_is_integer(j) && json_integer_value(j) >= 0 && json_integer_value(j) <= LONG_MAX
                       ? (long)json_integer_value(j)
                       : -1;
}

static char *json_str(json_t *obj, const char *key)
{
        json_t *j = json_object_get(obj, key);

        return json_is_string(j) ? xstrdup(json_string_value(j)) : NULL;
}

static void library_from_json(json_t *obj, const char *version_key, struct probe_library *l)
{
        if (!json_is_object(obj))
                return;
        l->loaded = json_is_true(json_object_get(obj, "loaded"));
        l->soname = json_str(obj, "soname");
        l->path = json_str(obj, "realpath");
        if (!l->path)
                l->path = json_str(obj, "path");
        l->error = json_str(obj, "error");
        l->version = json_long(obj, version_key);
        l->version_error = json_long(obj, "runtime_version_error");
        l->cudart_version = json_long(obj, "cudart_version");
}

/* Whether s is a compute capability as TORCH_CUDA_ARCH_LIST takes it:
 * digits, '.', digits ("9.0"). */
static bool compute_capability_valid(const char *s)
{
        const char *p = s;

        if (!ascii_isdigit(*p))
                return false;
        while (ascii_isdigit(*p))
                p++;
        if (*p++ != '.' || !ascii_isdigit(*p))
                return false;
        while (ascii_isdigit(*p))
                p++;
        return *p == '\0' && p - s <= 16;
}

/* Fill r from the probe's document; -EBADMSG when it is not one (*why
 * then says what was wrong, or stays NULL). A compute capability goes
 * into the index and from there into modules (pytorch.cuda_arch_list:
 * detect): an answer that is not one, from a launcher or a node that
 * lies, makes the document unreadable rather than recorded. */
static int report_from_json(json_t *doc, struct probe_report *r, char **why)
{
        const struct component *toolkit = component_toolkit();
        json_t *cudart = json_object_get(doc, toolkit->probe.key), *driver = json_object_get(doc, "driver"), *devices;

        if (!json_is_object(doc) || json_long(doc, "probe") != 1 || !json_is_object(cudart))
                return -EBADMSG;
        FOREACH_COMPONENT(c)
                library_from_json(json_object_get(doc, c->probe.key),
                                  c->probe.version_key ? c->probe.version_key : "version", &r->libs[c->index]);
        r->runtime_driver_version = json_long(cudart, "driver_version");
        r->runtime_device_count = json_long(cudart, "device_count") > INT_MAX ? INT_MAX
                                  : (int)json_long(cudart, "device_count");
        if (r->runtime_device_count < 0)
                r->runtime_device_error = json_str(cudart, "error");
        r->visible_devices = json_str(doc, "visible_devices");
        r->host = json_str(doc, "host");
        if (!json_is_object(driver))
                return 0;
        r->driver_loaded = json_is_true(json_object_get(driver, "loaded"));
        r->driver_path = json_str(driver, "realpath");
        if (!r->driver_path)
                r->driver_path = json_str(driver, "path");
        r->driver_error = json_str(driver, "error");
        r->driver_version = json_long(driver, "version");
        devices = json_object_get(driver, "devices");
        if (json_is_array(devices) && json_array_size(devices) > 0) {
                size_t n = json_array_size(devices) < MAX_DEVICES ? json_array_size(devices) : MAX_DEVICES;

                r->devices = xcalloc(n, sizeof(*r->devices));
                for (size_t i = 0; i < n; i++) {
                        json_t *d = json_array_get(devices, i);
                        struct probe_device *pd = &r->devices[r->n_devices++];
                        long index = json_long(d, "index");

                        pd->index = index >= 0 && index <= INT_MAX ? (int)index : (int)i;
                        pd->name = json_str(d, "name");
                        pd->compute_capability = json_str(d, "compute_capability");
                        if (pd->compute_capability && !compute_capability_valid(pd->compute_capability)) {
                                _cleanup_free_ char *shown = json_dumps(json_object_get(d, "compute_capability"),
                                                                        JSON_ENCODE_ANY | JSON_ENSURE_ASCII);

                                *why = xasprintf("device %zu's compute_capability %s is not one "
                                                 "(digits '.' digits)", i, shown ? shown : "?");
                                return -EBADMSG;
                        }
                        pd->memory_mib = json_long(d, "memory_mib");
                }
        }
        return 0;
}

/* probe_run in two halves: probe_start never fails (what went wrong is in
 * the report that probe_finish gives). */
struct probe_job {
        struct probe_report report;
        bool started, launcher;
        struct process proc;
        const char *who, *who_name;
        unsigned timeout;
};

static void probe_start(const struct validate_module *t, const struct validate_options *o,
                        struct probe_job *job)
{
        _cleanup_(strv_release) struct strv env = { 0 }, argv = { 0 };
        _cleanup_free_ char *exe = NULL, *major_arg = NULL;
        bool launcher = o->launcher && o->launcher[0];
        unsigned long major = module_cuda_major(t);
        extern char **environ;
        char *const *launch_env;
        int r, err = 0;

        *job = (struct probe_job){
                .launcher = launcher,
                .who_name = launcher ? o->launcher[0] : o->probe,
                .who = launcher ? "the launcher" : "the probe",
                .timeout = o->timeout ? o->timeout : DEFAULT_TIMEOUT,
        };
        probe_report_release(&job->report);
        if (!o->probe) {
                job->report.launch_error = xstrdup("no probe program was given");
                return;
        }

        env_build(t->env, o->driver_libdir, &env);
        if (launcher)
                for (char **a = o->launcher; *a; a++)
                        strv_add(&argv, *a);
        strv_add(&argv, o->probe);
        /* Behind a launcher the probe takes the module's environment from
         * its arguments, keeping what the job step set (CUDA_VISIBLE_DEVICES,
         * SLURM_*), and executes itself again with it. */
        for (size_t i = 0; launcher && i < env.len; i++) {
                strv_add(&argv, "--env");
                strv_add(&argv, env.items[i]);
        }
        if (major >= 11 && major <= 999) {
                major_arg = xasprintf("%lu", major);
                strv_add(&argv, "--cuda-major");
                strv_add(&argv, major_arg);
        }
        /* Only the module's own library (and the runtime, always). */
        FOREACH_COMPONENT(c) {
                if (c != t->kind && c->probe.off)
                        strv_add(&argv, c->probe.off);
                if (c == t->kind && c->probe.request) {
                        strv_add(&argv, "--library");
                        strv_add(&argv, c->probe.request);
                }
        }

        /* A launcher (srun) runs in the caller's environment, which has
         * what it needs (PATH, SLURM_*, …); the probe behind it gets the
         * module's through --env. Without a launcher the probe gets the
         * module's directly. */
        launch_env = launcher ? environ : env.items;
        exe = process_find_program(job->who_name, launch_env, &err);
        if (!exe) {
                const char *path = env_get(launch_env, "PATH");

                if (strchr(job->who_name, '/'))
                        job->report.launch_error = xasprintf("%s '%s' could not be started: %s", job->who,
                                                             job->who_name, strerror(err));
                else
                        job->report.launch_error = xasprintf(
                                "%s '%s' could not be started: %s in PATH (%s)", job->who,
                                job->who_name, err == EACCES ? "not executable" : "not found",
                                path ? path : "unset");
                job->report.launcher_failed = launcher;
                return;
        }
        r = process_start(exe, strv_exec(&argv), launcher ? launch_env : strv_exec(&env), NULL,
                          job->timeout, &job->proc);
        if (r < 0) {
                job->report.launch_error = xasprintf("%s '%s' could not be started: %s", job->who,
                                                     job->who_name, strerror(-r));
                job->report.launcher_failed = launcher;
                return;
        }
        job->started = true;
}

static void probe_finish(struct probe_job *job, struct probe_report *ret)
{
        _cleanup_free_ char *why = NULL;
        _cleanup_(child_release) struct child c = { .out = STRBUF_INIT, .err = STRBUF_INIT };
        struct probe_report *r = &job->report;
        const char *who_name = job->who_name, *who = job->who;
        bool launcher = job->launcher;
        json_error_t jerr;
        json_t *doc;

        if (!job->started)
                goto done;
        job->started = false;
        process_finish(&job->proc, &c);
        if (c.exec_errno) {
                r->launch_error = xasprintf("%s '%s' could not be started: %s", who, who_name,
                                            strerror(c.exec_errno));
                r->launcher_failed = launcher;
                goto done;
        }
        r->started = true;
        if (c.timed_out) {
                _cleanup_free_ char *strays = child_strays_string(&c);

                if (launcher)
                        r->launch_error = xasprintf("the launcher '%s' timed out after %u s, killed%s",
                                                    who_name, job->timeout, strays);
                else
                        r->launch_error = xasprintf("timed out after %u s, killed%s", job->timeout, strays);
                r->launcher_failed = launcher;
                goto done;
        }
        if (!child_succeeded(&c)) {
                _cleanup_free_ char *ending = child_ending(&c), *tail = text_tail(c.err.buf, c.err.len);

                if (launcher)
                        r->launch_error = xasprintf("the launcher '%s' failed: %s%s%s", who_name, ending,
                                                    *tail ? ": " : "", tail);
                else
                        r->launch_error = xasprintf("%s%s%s", ending, *tail ? ": " : "", tail);
                r->launcher_failed = launcher;
                goto done;
        }

        doc = json_loadb(c.out.buf, c.out.len, 0, &jerr);
        if (!doc) {
                _cleanup_free_ char *text = utf8_sanitize(jerr.text);

                r->launch_error = xasprintf("unreadable output: %s (line %d)", text, jerr.line);
                goto done;
        }
        if (report_from_json(doc, r, &why) < 0) {
                probe_report_release(r);
                r->launch_error = why ? xasprintf("unreadable output: %s", why)
                                      : xstrdup("unreadable output: not a cudamod-probe document");
        } else {
                r->ran = true;
        }
        json_decref(doc);

done:
        *ret = *r;
        *r = (struct probe_report){ 0 };
}

int probe_run(const struct validate_module *t, const struct validate_options *o, struct probe_report *ret)
{
        struct probe_job job;

        probe_start(t, o, &job);
        probe_finish(&job, ret);
        return 0;
}

/* --- run --------------------------------------------------------------- */

/* The module's library directories, for messages: "'/a', '/b'". */
static char *own_dirs_string(const struct validate_module *t)
{
        struct strbuf sb = STRBUF_INIT;

        for (size_t i = 0; i < t->own_libdirs.len; i++)
                strbuf_addf(&sb, "%s'%s'", i ? ", " : "", t->own_libdirs.items[i]);
        return strbuf_detach(&sb);
}

/* Whether the file loaded (l->path, a realpath) is what the module's
 * library directories offer under its soname; *ret_offered tells whether
 * they offer that soname at all. */
static bool loaded_from_module(const struct validate_module *t, const struct probe_library *l, bool *ret_offered)
{
        bool offered = false, same = false;

        for (size_t i = 0; i < t->own_libdirs.len && l->soname; i++) {
                _cleanup_free_ char *file = path_join(t->own_libdirs.items[i], l->soname);
                _cleanup_free_ char *real = realpath(file, NULL);

                if (!real)
                        continue;
                offered = true;
                if (l->path && streq(real, l->path))
                        same = true;
        }
        *ret_offered = offered;
        return same;
}

/* cudaErrorStubLibrary (34) and cudaErrorInsufficientDriver (35): what
 * CUDA 11's cudaRuntimeGetVersion answers where no driver is loaded (a
 * login node); CUDA 12's and 13's answer without one. */
static bool for_want_of_a_driver(long error)
{
        return error == 34 || error == 35;
}

/* The runtime code (11080) the real file name of the libcudart l tells
 * (libcudart.so.11.8.89); -1 when it tells no minor, or is the soname
 * itself (CUDA 11's libcudart.so.11.0 says nothing of 11.8). */
static long file_runtime_code(const struct probe_library *l)
{
        struct version v = lib_file_version(l->path, component_toolkit()->library);

        if (l->soname && streq(path_basename(l->path), l->soname))
                return -1;
        return v.count >= 2 ? (long)(v.n[0] * 1000 + v.n[1] * 10) : -1;
}

/* The cudart version in the version.json of prefix, as a runtime code
 * (11.8.89 -> 11080); -ENOENT when there is none to read. */
static int metadata_cudart_code(const char *prefix, long *ret, char **ret_file)
{
        _cleanup_free_ char *file = path_join(prefix, "version.json");
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct version_json vj = { 0 };
        struct version v;
        int r = file_read_regular_at(AT_FDCWD, file, file, 1 << 20, false, &sb, &d);

        if (r < 0)
                return -ENOENT;
        r = version_json_parse(sb.buf, sb.len, file, &vj, &d);
        if (r >= 0 && vj.components[CUDA_COMP_CUDART] &&
            version_parse(vj.components[CUDA_COMP_CUDART], &v) == 0 && v.count >= 2) {
                *ret = (long)(v.n[0] * 1000 + v.n[1] * 10);
                *ret_file = TAKE_PTR(file);
        } else {
                r = -ENOENT;
        }
        version_json_release(&vj);
        return r < 0 ? r : 0;
}

/* The prefixes whose metadata tell the toolkit of a module: its
 * CUDA_HOME-like variables, and the directory above the library's
 * (lib64/.. and targets/<triple>/lib/../../..). */
static void toolkit_prefixes(const struct validate_module *t, const char *lib, struct strv *ret)
{
        static const char *const vars[] = { "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR" };
        _cleanup_free_ char *dir = path_dirname(lib), *up = path_dirname(dir);
        _cleanup_free_ char *up2 = path_dirname(up), *up3 = path_dirname(up2);

        for (size_t i = 0; i < ELEMENTSOF(vars); i++) {
                const char *v = env_get(t->env, vars[i]);

                if (v && *v == '/' && !strv_contains(ret, v))
                        strv_add(ret, v);
        }
        if (!strv_contains(ret, up))
                strv_add(ret, up);
        if (!strv_contains(ret, up3))
                strv_add(ret, up3);
}

/* A runtime that could not tell its version for want of a driver: the
 * version its file name, its install's version.json and the module's
 * header tell, when they agree (facts say where it came from); -1 with
 * the failure added when none tells or they disagree. */
static long runtime_version_without_driver(const struct validate_module *t, const struct component *kind,
                                           const struct probe_library *l, struct findings *f)
{
        _cleanup_(strv_release) struct strv where = { 0 }, prefixes = { 0 };
        _cleanup_strbuf_ struct strbuf told = STRBUF_INIT;
        long codes[3], n = 0, code = file_runtime_code(l);
        bool agree = true;
        char *file = NULL;

        if (code >= 0) {
                codes[n++] = code;
                strv_push(&where, xasprintf("its file name '%s'", path_basename(l->path)));
        }
        toolkit_prefixes(t, l->path, &prefixes);
        for (size_t i = 0; i < prefixes.len; i++)
                if (metadata_cudart_code(prefixes.items[i], &code, &file) == 0) {
                        codes[n++] = code;
                        strv_push(&where, xasprintf("'%s' (cuda_cudart)", file));
                        free(file);
                        break;
                }
        if (component_header_version(&t->own_incdirs, kind, &code, &file) == 0) {
                codes[n++] = code;
                strv_push(&where, xasprintf("'%s' (CUDART_VERSION)", file));
        }
        free(file);
        for (long i = 0; i < n; i++) {
                _cleanup_free_ char *v = code_string(kind, codes[i]);

                agree &= codes[i] == codes[0];
                strbuf_addf(&told, "%s%s says %s", i ? ", " : "", where.items[i], v);
        }
        if (n == 0) {
                findings_add(f, CHECK_FAIL,
                            "%s from '%s' did not tell its version without a driver (error %ld), and neither its file name, version.json nor the module's headers tell it: %s",
                            l->soname, l->path, l->version_error, l->error ? l->error : "no error given");
                return -1;
        }
        if (!agree) {
                findings_add(f, CHECK_FAIL,
                            "%s from '%s' did not tell its version without a driver (error %ld), and what tells it disagrees: %s; the library, its metadata and its headers come from different installs",
                            l->soname, l->path, l->version_error, told.buf);
                return -1;
        }
        findings_add(f, CHECK_PASS,
                    "the runtime cannot tell its version without a driver (error %ld, as CUDA 11's does), so it was read where it is written: %s",
                    l->version_error, told.buf);
        return codes[0];
}

/* The kind's library: loaded from the module, and its version equal to the
 * header's and the module's. Returns whether it was read (so further
 * comparisons make sense). */
static bool run_library(const struct validate_module *t, const struct component *kind,
                        const struct probe_library *l, struct findings *f)
{
        const struct component_build_check *k = &kind->build;
        _cleanup_free_ char *lib_dir = NULL, *dirs = NULL, *have = NULL, *header = NULL, *hdr = NULL;
        const char *soname = l->soname ? l->soname : "?";
        long version = l->version, code;
        bool offered;
        int r;

        if (!l->loaded) {
                dirs = own_dirs_string(t);
                findings_add(f, CHECK_FAIL, "%s could not be loaded: %s: LD_LIBRARY_PATH must reach the module's %s",
                            k->what, l->error ? l->error : "no error given",
                            *dirs ? dirs : "library directory (it adds none)");
                return false;
        }
        if (l->path && !loaded_from_module(t, l, &offered)) {
                dirs = own_dirs_string(t);
                lib_dir = path_dirname(l->path);
                findings_add(f, CHECK_FAIL,
                            "%s was loaded from '%s', not from the module's %s%s%s: another %s comes first on the loader path (LD_LIBRARY_PATH or /etc/ld.so.cache); unload it or put the module's directory first in LD_LIBRARY_PATH",
                            soname, lib_dir, *dirs ? dirs : "library directories (it adds none)",
                            offered ? "" : ", which has no ", offered ? "" : soname, k->what);
                return false;
        }
        if (version < 0 && kind->toolkit && l->path && for_want_of_a_driver(l->version_error)) {
                version = runtime_version_without_driver(t, kind, l, f);
                if (version < 0)
                        return false;
        } else if (version < 0) {
                findings_add(f, CHECK_FAIL, "%s from '%s' did not tell its version: %s", soname,
                            l->path ? l->path : "?", l->error ? l->error : "no error given");
                return false;
        }
        have = code_string(kind, version);
        findings_add(f, CHECK_PASS, "%s %s from '%s'", soname, have, l->path ? l->path : "?");

        r = component_header_version(&t->own_incdirs, kind, &code, &header);
        if (r == -ENOENT && !header && t->runtime)
                findings_add(f, CHECK_PASS, "no %s to compare with: a runtime-only install has none",
                            kind->version_headers[0]);
        else if (r == -ENOENT && !header)
                findings_add(f, CHECK_WARN, "no %s in the module's include directories to compare %s %s with",
                            kind->version_headers[0], soname, have);
        else if (r < 0)
                findings_add(f, CHECK_WARN, "'%s' declares no readable version to compare %s %s with", header,
                            soname, have);
        else if (code != version) {
                hdr = code_string(kind, code);
                findings_add(f, CHECK_FAIL,
                            "%s is %s but the module's '%s' declares %s: the headers and the library come from different installs; point CPATH and LD_LIBRARY_PATH at one",
                            soname, have, header, hdr);
        } else {
                findings_add(f, CHECK_PASS, "equal to '%s'", header);
        }

        if (t->version && *t->version) {
                struct version mv, lv = kind->code_version(version);
                const char *end;

                if (version_parse_prefix(t->version, &mv, &end) == 0) {
                        unsigned parts = mv.count < lv.count ? mv.count : lv.count;
                        struct version a = version_truncate(&mv, parts), b = version_truncate(&lv, parts);

                        if (version_compare(&a, &b) != 0)
                                findings_add(f, CHECK_FAIL,
                                            "the module is %s but %s is %s: the module points at another install than its name says; fix the module or its name",
                                            t->module ? t->module : t->version, soname, have);
                        else
                                findings_add(f, CHECK_PASS, "agrees with the module version %s", t->version);
                }
        }
        return true;
}

/* A library that tells the CUDA runtime it was built with (cuDNN's
 * cudnnGetCudartVersion): that major is the loaded runtime's. */
static void run_runtime_match(const struct component *kind, const struct probe_report *p, struct findings *f)
{
        const struct probe_library *lib = &p->libs[kind->index], *rt = runtime_of(p);
        const struct component *toolkit = component_toolkit();
        _cleanup_free_ char *lib_v = NULL, *rt_v = NULL;
        long want, rt_version;

        if (lib->cudart_version < 1000)
                return;
        want = lib->cudart_version / 1000;
        lib_v = code_string(kind, lib->version);
        rt_version = rt->version;
        /* CUDA 11 without a driver: its file name tells. */
        if (rt->loaded && rt_version < 0 && rt->path && for_want_of_a_driver(rt->version_error))
                rt_version = file_runtime_code(rt);
        if (!rt->loaded || rt_version < 1000) {
                findings_add(f, CHECK_WARN,
                            "%s %s is built for CUDA %ld (cudart %ld) but no CUDA runtime was loaded with it (%s): load a CUDA %ld module with it",
                            kind->label, lib_v, want, lib->cudart_version, rt->error ? rt->error : "no error given", want);
                return;
        }
        rt_v = code_string(toolkit, rt_version);
        if (rt_version / 1000 != want)
                findings_add(f, CHECK_FAIL,
                            "%s %s is built for CUDA %ld (cudart %ld) but the loaded runtime is %s, %s from '%s': use a %s built for CUDA %ld or load a CUDA %ld module",
                            kind->label, lib_v, want, lib->cudart_version, rt_v, rt->soname ? rt->soname : "?",
                            rt->path ? rt->path : "?", kind->label, rt_version / 1000, want);
        else
                findings_add(f, CHECK_PASS, "built for CUDA %ld (cudart %ld), as the loaded runtime %s", want,
                            lib->cudart_version, rt_v);
}

/* For a report that did not run: "failed" when the probe itself was
 * started and ended badly (a crash, an exit status, unreadable output),
 * "did not run" when it, or the launcher before it, never got that far. */
static const char *probe_outcome(const struct probe_report *p)
{
        return p->started && !p->launcher_failed ? "failed" : "did not run";
}

void check_run(const struct validate_module *t, const struct probe_report *p, struct check *ret)
{
        struct findings f = FINDINGS_INIT;
        const struct probe_library *l;

        ret->id = "run";
        if (!t->kind) {
                _cleanup_free_ char *labels = component_list(COMPONENT_FIELD_LABEL, " or ");

                check_set(ret, CHECK_SKIP, "not a %s module: no library to load", labels);
                return;
        }
        if (!p->ran) {
                if (p->launcher_failed)
                        check_set(ret, CHECK_FAIL,
                                  "the launcher failed, so the probe did not run and the module was not checked (fix the launcher command or the target): %s",
                                  p->launch_error ? p->launch_error : "no reason given");
                else
                        check_set(ret, CHECK_FAIL, "the probe %s: %s", probe_outcome(p),
                                  p->launch_error ? p->launch_error : "no reason given");
                return;
        }
        l = &p->libs[t->kind->index];
        if (run_library(t, t->kind, l, &f))
                run_runtime_match(t->kind, p, &f);
        check_set(ret, f.worst, "%s", f.problems.len ? f.problems.buf : f.facts.buf);
        findings_release(&f);
}

/* --- device ------------------------------------------------------------ */

/* "12080 (CUDA 12.8)" */
static char *driver_string(long v)
{
        return xasprintf("%ld (CUDA %ld.%ld)", v, v / 1000, v % 1000 / 10);
}

void check_device(const struct validate_module *t, const struct validate_options *o,
                  const struct probe_report *p, struct check *ret)
{
        enum check_status absent = o->require_device ? CHECK_FAIL : CHECK_SKIP;
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_free_ char *driver = NULL;
        long dv, rv = runtime_of(p)->loaded ? runtime_of(p)->version : -1;

        ret->id = "device";
        if (!t->kind) {
                _cleanup_free_ char *labels = component_list(COMPONENT_FIELD_LABEL, " or ");

                check_set(ret, CHECK_SKIP, "not a %s module", labels);
                return;
        }
        if (!p->ran) {
                check_set(ret, absent, "the probe %s, so no device was queried: %s", probe_outcome(p),
                          p->launch_error ? p->launch_error : "no reason given");
                return;
        }
        if (!p->driver_loaded) {
                check_set(ret, absent,
                          "no NVIDIA driver: libcuda.so.1 could not be loaded (%s); expected on a machine without a GPU, otherwise name the driver's directory (--driver-libdir) or run the probe on a GPU node through a launcher",
                          p->driver_error ? p->driver_error : "no error given");
                return;
        }
        dv = p->driver_version >= 0 ? p->driver_version : p->runtime_driver_version > 0 ? p->runtime_driver_version : -1;
        if (dv < 0) {
                check_set(ret, CHECK_FAIL, "the driver '%s' did not tell its version: %s",
                          p->driver_path ? p->driver_path : "libcuda.so.1",
                          p->driver_error ? p->driver_error : "no error given");
                return;
        }
        driver = driver_string(dv);
        if (rv >= 1000 && dv < rv / 1000 * 1000) {
                check_set(ret, CHECK_FAIL,
                          "driver %s is older than the runtime %ld needs (≥ %ld): update the NVIDIA driver or use a CUDA ≤ %ld.%ld module",
                          driver, rv, rv / 1000 * 1000, dv / 1000, dv % 1000 / 10);
                return;
        }
        if (p->n_devices == 0) {
                check_set(ret, absent, "driver %s sees no GPU%s%s: expected on a machine without one; run the probe on a GPU node through a launcher",
                          driver, p->driver_error ? ": " : "", p->driver_error ? p->driver_error : "");
                return;
        }

        strbuf_addf(&sb, "%zu GPU%s: ", p->n_devices, p->n_devices == 1 ? "" : "s");
        for (size_t i = 0; i < p->n_devices; i++) {
                const struct probe_device *d = &p->devices[i];
                _cleanup_free_ char *name = utf8_sanitize(d->name ? d->name : "?");

                strbuf_addf(&sb, "%s%d %s (%s, ", i ? "; " : "", d->index, name,
                            d->compute_capability ? d->compute_capability : "?");
                if (d->memory_mib >= 0)
                        strbuf_addf(&sb, "%ld MiB)", d->memory_mib);
                else
                        strbuf_addstr(&sb, "? MiB)");
        }
        strbuf_addf(&sb, "; driver %s", driver);
        if (rv >= 1000)
                strbuf_addf(&sb, ", enough for the runtime %ld", rv);
        if (rv >= 1000 && p->runtime_device_count < 0) {
                check_set(ret, CHECK_WARN, "%s; but the runtime could not count the GPUs: %s", sb.buf,
                          p->runtime_device_error ? p->runtime_device_error : "no error given");
                return;
        }
        check_set(ret, CHECK_PASS, "%s", sb.buf);
}
