/* validate-toolchain.c: the nvcc and cmake checks of `cudamod validate`
 * (doc/guide.md, `cudamod validate`: nvcc and cmake): what a PyTorch source build does first with a CUDA
 * module loaded, done with the module's environment only (t->env).
 *
 * nvcc: the host compiler the environment gives nvcc (-ccbin in
 * NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS, else `gcc` on nvcc's PATH) and
 * CMake (CUDAHOSTCXX) is compared with what the toolkit's own
 * crt/host_config.h accepts (STACK.md §6), then a .cu program (a kernel and
 * cudaGetDeviceCount) is compiled, linked with the shared cudart and
 * started. cmake: a project with enable_language(CUDA) and
 * find_package(CUDAToolkit) is configured, and what CMake found is compared
 * with the module's toolkit.
 *
 * Programs are started as validate-probe.c starts the C compiler: by
 * process_run, in a private temporary directory removed afterwards, each
 * run killed at the timeout. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "validate-toolchain.h"
#include "component-table.h"
#include "process.h"
#include "strbuf.h"
#include "toolchain.h"
#include "util-file.h"
#include "util.h"
#include "validate-check.h"
#include "version.h"
#include "banned.h"

#define DEFAULT_TIMEOUT 120
#define HOST_CONFIG_MAX (1024 * 1024)
#define ERROR_LINES 3

/* An argv or envp for execve: never NULL, even for an empty strv. */
static char *const *strv_exec_items(const struct strv *v)
{
        static char *const empty[] = { NULL };

        return v->items ? v->items : empty;
}

/* --- the host compiler ------------------------------------------------- */

static const char *host_compiler_kind_name(enum host_compiler_kind k)
{
        return k == HOST_COMPILER_CLANG ? "clang" : k == HOST_COMPILER_INTEL ? "Intel ICX" : "GCC";
}

/* "NAME=value" (a variable nvcc sets, such as _HERE_ or INCLUDES). */
static bool assignment(const char *s)
{
        size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");

        return n > 0 && s[n] == '=';
}

/* The first word of a `nvcc --dryrun` command line, quotes removed
 * ("\"/usr/bin\"/g++-11 -D..." → /usr/bin/g++-11). */
static char *dryrun_word(const char *line)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        bool quoted = false;

        for (const char *p = line; *p && (quoted || (*p != ' ' && *p != '\t')); p++)
                if (*p == '"')
                        quoted = !quoted;
                else
                        strbuf_addch(&sb, *p);
        return strbuf_detach(&sb);
}

/* The host compiler nvcc runs, as `nvcc --dryrun` (started with env in
 * dir, on the program there) shows it: the first command it prints that
 * is not a variable assignment is the host compiler's preprocessing run,
 * looked up in the PATH nvcc prints (its profile's additions in front).
 * Authoritative: nvcc's profile, -ccbin in its flags variables and
 * NVCC_CCBIN (which CUDA 13 reads and 11.8 ignores) all show in it. NULL
 * when nvcc cannot say. */
static char *nvcc_dryrun_host(const char *nvcc, char *const *env, const char *dir, unsigned timeout)
{
        char *argv[] = { (char *)nvcc, (char *)"--dryrun", (char *)"-cudart", (char *)"shared", (char *)"-o",
                         (char *)"cudamod-nvcc", (char *)"cudamod-nvcc.cu", NULL };
        _cleanup_(child_release) struct child c = { .out = STRBUF_INIT, .err = STRBUF_INIT };
        _cleanup_free_ char *path = NULL, *word = NULL, *search = NULL;
        int err = 0;

        if (process_run(nvcc, argv, env, dir, timeout, &c) < 0 || !child_succeeded(&c))
                return NULL;
        for (const char *p = c.err.len ? c.err.buf : c.out.buf; *p;) {
                const char *e = strchrnul(p, '\n');
                _cleanup_free_ char *line = xstrndup(p, (size_t)(e - p));

                p = *e ? e + 1 : e;
                if (!startswith(line, "#$ "))
                        continue;
                if (startswith(line, "#$ PATH=")) {
                        free(path);
                        path = xstrdup(line + strlen("#$ PATH="));
                        continue;
                }
                if (assignment(line + 3))
                        continue;
                word = dryrun_word(line + 3);
                break;
        }
        if (!word || !*word)
                return NULL;
        search = xasprintf("PATH=%s", path ? path : "");
        return process_find_program(word, (char *[]){ search, NULL }, &err);
}


/* env minus PWD, OLDPWD (the scratch directory is the working one). */
static void env_for_build(char *const *env, struct strv *ret)
{
        for (char *const *e = env; e && *e; e++)
                if (strchr(*e, '=') && !startswith(*e, "PWD=") && !startswith(*e, "OLDPWD="))
                        strv_add(ret, *e);
}

/* Whether the nvcc and cmake checks pass on the module's variable name:
 * what they check (where headers, libraries and the toolkit are; nvcc's
 * own variables; CUDACXX, which validate_refused_toolchain_variable let
 * through), never a variable that names a program to start. */
static bool toolchain_keeps(const char *name)
{
        static const char *const kept[] = {
                "HOME", "USER", "LOGNAME", "TMPDIR", "LANG", "LANGUAGE", "TERM", "LD_LIBRARY_PATH",
                "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "CMAKE_PREFIX_PATH",
                "CMAKE_INCLUDE_PATH", "CMAKE_LIBRARY_PATH", "PKG_CONFIG_PATH", "CUDACXX", "CUDAHOSTCXX",
                "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN", "CUDAARCHS", "TORCH_CUDA_ARCH_LIST",
        };
        static const char *const never[] = { "COMPILER_PATH", "CMAKE_PROGRAM_PATH", "GCONV_PATH" };
        static const char *const suffixes[] = { "_HOME", "_ROOT", "_DIR", "_PATH" };

        for (size_t i = 0; i < ELEMENTSOF(kept); i++)
                if (streq(name, kept[i]))
                        return true;
        for (size_t i = 0; i < ELEMENTSOF(never); i++)
                if (streq(name, never[i]))
                        return false;
        if (startswith(name, "LC_"))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                if (endswith(name, suffixes[i]) && !startswith(name, "LD_"))
                        return true;
        return false;
}

/* The environment of the nvcc and cmake checks: the module's whole one
 * (but PWD) with --trust-modulefiles; else the variables toolchain_keeps
 * of it, and PATH cudamod's own (cc_path), then path_tail when not NULL. */
static void toolchain_env(const struct validate_module *t, const struct validate_options *o, const char *path_tail,
                          struct strv *ret)
{
        if (o->trust_modulefiles) {
                env_for_build(t->env, ret);
                return;
        }
        for (char *const *e = t->env; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                _cleanup_free_ char *name = eq ? xstrndup(*e, (size_t)(eq - *e)) : NULL;

                if (name && toolchain_keeps(name))
                        strv_add(ret, *e);
        }
        {
                _cleanup_free_ char *path = xasprintf("PATH=%s%s%s", o->cc_path ? o->cc_path : "/usr/bin:/bin",
                                                      path_tail ? ":" : "", path_tail ? path_tail : "");

                strv_add(ret, path);
        }
}

/* Fail ret, saying why, and return true when the load sets a variable the
 * nvcc and cmake checks refuse (validate_refused_toolchain_variable) and
 * the modulefiles are not trusted. who: what would start the program. */
static bool toolchain_refused(const struct validate_module *t, const struct validate_options *o, const char *who,
                              struct check *ret)
{
        _cleanup_free_ char *name = o->trust_modulefiles ? NULL : validate_refused_toolchain_variable(t->env);

        if (!name)
                return false;
        if (streq(name, "CUDACXX")) {
                const char *home = env_get(t->env, "CUDA_HOME");

                check_set(ret, CHECK_FAIL,
                          "refused: the load sets CUDACXX='%s', which is not an nvcc of the module's toolkit (below CUDA_HOME%s%s%s): "
                          "%s would start it as the caller; remove it from the site config's env, or give --trust-modulefiles "
                          "to let the module choose",
                          env_get(t->env, name), home ? " '" : ", which it does not set", home ? home : "", home ? "'" : "", who);
                return true;
        }
        check_set(ret, CHECK_FAIL,
                  "refused: the load sets %s='%s', which names a program (or CMake code) %s would start as the caller; "
                  "validate starts only its own compiler and build tool, from its own PATH (give --trust-modulefiles "
                  "to let the module choose)",
                  name, env_get(t->env, name), who);
        return true;
}

static bool dir_listed(const struct strv *dirs, const char *path)
{
        _cleanup_free_ char *dir = path_dirname(path);
        _cleanup_free_ char *real = realpath(dir, NULL);

        for (size_t i = 0; i < dirs->len; i++) {
                _cleanup_free_ char *d = realpath(dirs->items[i], NULL);

                if (streq(dirs->items[i], dir) || (d && real && streq(d, real)))
                        return true;
        }
        return false;
}

/* The module's crt/host_config.h: in its include directories, else next
 * to its nvcc (bin/../include). */
static char *host_config_find(const struct validate_module *t, const char *nvcc, struct strbuf *ret_buf)
{
        _cleanup_free_ char *bindir = path_dirname(nvcc), *top = path_dirname(bindir);
        _cleanup_free_ char *beside = xasprintf("%s/include/crt/host_config.h", top);

        for (size_t i = 0; i < t->own_incdirs.len; i++) {
                char *path = path_join(t->own_incdirs.items[i], "crt/host_config.h");

                strbuf_reset(ret_buf);
                if (file_read_regular_at(AT_FDCWD, path, NULL, HOST_CONFIG_MAX, false, ret_buf, NULL) == 0)
                        return path;
                free(path);
        }
        strbuf_reset(ret_buf);
        if (file_read_regular_at(AT_FDCWD, beside, NULL, HOST_CONFIG_MAX, false, ret_buf, NULL) == 0)
                return TAKE_PTR(beside);
        return NULL;
}

/* The CUDA major of the module's toolkit from CUDART_VERSION in its
 * cuda_runtime_api.h; 0 when unknown. */
static unsigned long toolkit_major(const struct validate_module *t, const char *nvcc)
{
        _cleanup_strbuf_ struct strbuf buf = STRBUF_INIT;
        _cleanup_free_ char *bindir = path_dirname(nvcc), *top = path_dirname(bindir);
        _cleanup_free_ char *beside = xasprintf("%s/include", top);
        struct strv dirs = { 0 };
        unsigned long major = 0;
        long code;

        for (size_t i = 0; i < t->own_incdirs.len; i++)
                strv_add(&dirs, t->own_incdirs.items[i]);
        strv_add(&dirs, beside);
        for (size_t i = 0; i < dirs.len && !major; i++) {
                _cleanup_free_ char *path = path_join(dirs.items[i], "cuda_runtime_api.h");

                strbuf_reset(&buf);
                if (file_read_regular_at(AT_FDCWD, path, NULL, 64 * 1024, true, &buf, NULL) == 0 &&
                    component_toolkit()->header_code(buf.buf, buf.len, &code) == 0)
                        major = (unsigned long)(code / 1000);
        }
        strv_release(&dirs);
        return major;
}

static bool same_file(const char *a, const char *b);

/* --- nvcc -------------------------------------------------------------- */

static const char nvcc_program[] =
        "#include <dlfcn.h>\n"
        "#include <stdio.h>\n"
        "#include <cuda_runtime.h>\n"
        "\n"
        "__global__ void cudamod_kernel(int *out)\n"
        "{\n"
        "        *out = 42;\n"
        "}\n"
        "\n"
        "int main(void)\n"
        "{\n"
        "        int n = -1, *d = 0, h = 0;\n"
        "        cudaError_t e = cudaGetDeviceCount(&n);\n"
        "        Dl_info info;\n"
        "        const char *lib = dladdr((void *)&cudaGetDeviceCount, &info) && info.dli_fname ? info.dli_fname : \"?\";\n"
        "\n"
        "        printf(\"cudart %s\\n\", lib);\n"
        "        if (e != cudaSuccess) {\n"
        "                printf(\"error %d %s\\n\", (int)e, cudaGetErrorName(e));\n"
        "                return 0;\n"
        "        }\n"
        "        printf(\"devices %d\\n\", n);\n"
        "        if (n > 0) {\n"
        "                e = cudaMalloc((void **)&d, sizeof(int));\n"
        "                if (e == cudaSuccess) {\n"
        "                        cudamod_kernel<<<1, 1>>>(d);\n"
        "                        e = cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);\n"
        "                        cudaFree(d);\n"
        "                }\n"
        "                printf(\"kernel %d %d %s\\n\", h, (int)e, cudaGetErrorName(e));\n"
        "        }\n"
        "        return 0;\n"
        "}\n";

/* "line" of the program's output that starts with key and a space. */
static char *output_field(const char *out, const char *key)
{
        size_t n = strlen(key);

        for (const char *p = out; *p;) {
                const char *e = strchrnul(p, '\n');

                if ((size_t)(e - p) > n && !strncmp(p, key, n) && p[n] == ' ')
                        return xstrndup(p + n + 1, (size_t)(e - p - n - 1));
                p = *e ? e + 1 : e;
        }
        return NULL;
}

/* Check one host compiler, found as from says, against the limits: add a
 * fact or a failure naming both and the fix. */
/* Why a build with the toolkit's headers failed, when the messages tell a
 * known cause, for the failure's text (with a leading ": "); "" otherwise.
 * glibc 2.41 and newer declare C23 math functions (cospi, sinpi, rsqrt,
 * sincospi) noexcept; the crt/math_functions.h of CUDA 12.x (12.4 on
 * Debian trixie here; 12.8 and 12.9 by users' reports) declares them
 * without, and nvcc's host pass stops whatever the host compiler. */
static const char *known_cause(const char *out, const char *err)
{
        const char *const texts[] = { out ? out : "", err ? err : "" };

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                const char *t = texts[i];

                if ((strstr(t, "exception specification is incompatible") || strstr(t, "different exception specifier")) &&
                    strstr(t, "math_functions.h"))
                        return ": the toolkit's crt/math_functions.h declares C23 math functions (cospi, sinpi, rsqrt) without the noexcept this C library's <bits/mathcalls.h> gives them (glibc 2.41 and newer): no host compiler helps; use a CUDA whose headers match this glibc (13.0 does) or NVIDIA's patch to math_functions.h, or build on a system with an older glibc";
                if (strstr(t, "CMAKE_MAKE_PROGRAM is not set") || strstr(t, "unable to find a build program"))
                        return ": CMake found no build tool for its generator (make, or ninja with -G Ninja) in cudamod's PATH; install one where validate runs";
                if (strstr(t, "unsupported GNU version") || strstr(t, "unsupported clang version"))
                        return ": the toolkit refuses the host compiler (see the nvcc check); give one it accepts in the site config (host_compiler), which sets CUDAHOSTCXX";
        }
        return "";
}

/* Whether nvcc's flags variables in env switch the host compiler check
 * off (-allow-unsupported-compiler; the macro it defines). */
static bool host_check_overridden(char *const *env)
{
        static const char *const vars[] = { "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", NULL };
        static const char *const words[] = { "-allow-unsupported-compiler", "--allow-unsupported-compiler",
                                             "-D__NV_NO_HOST_COMPILER_CHECK", NULL };

        for (size_t i = 0; vars[i]; i++)
                for (size_t k = 0; words[k]; k++) {
                        const char *v = env_get(env, vars[i]);
                        const char *p = v ? strstr(v, words[k]) : NULL;

                        if (p && (p == v || p[-1] == ' ' || p[-1] == '\t'))
                                return true;
                }
        return false;
}

static void host_check(const char *who, const char *path, const char *from, const struct host_limits *lim,
                       const char *header, unsigned long cuda_major, char *const *env, unsigned timeout,
                       struct findings *f)
{
        _cleanup_(host_compiler_release) struct host_compiler h = { 0 };
        _cleanup_free_ char *why = NULL;
        long max;

        if (host_compiler_query(path, env, timeout, &h, &why) < 0) {
                findings_add(f, CHECK_FAIL, "%s '%s' (%s) does not tell its version: %s", who, path, from, why);
                return;
        }
        if (host_compiler_accepted(&h, lim, &max)) {
                findings_add(f, CHECK_PASS, "%s '%s' (%s) is %s %s, accepted by '%s'", who, path, from,
                             host_compiler_kind_name(h.kind), h.version, header);
                return;
        }
        if (host_check_overridden(env)) {
                findings_add(f, CHECK_WARN,
                             "%s '%s' (%s) is %s %s, which '%s' refuses, and the module's nvcc flags pass -allow-unsupported-compiler: it builds unsupported; give one it accepts in the site config (host_compiler: {\"%lu\": /path/to/g++})",
                             who, path, from, host_compiler_kind_name(h.kind), h.version, header, cuda_major);
                return;
        }
        if (max >= 0)
                findings_add(f, CHECK_FAIL,
                             "%s '%s' (%s) is %s %s, and '%s' accepts %s up to %ld: give a host compiler it accepts in the site config (host_compiler: {\"%lu\": /path/to/g++}, or {module: NAME}) and regenerate",
                             who, path, from, host_compiler_kind_name(h.kind), h.version, header,
                             host_compiler_kind_name(h.kind), max, cuda_major);
        else
                findings_add(f, CHECK_FAIL,
                             "%s '%s' (%s) is %s %s, which '%s' refuses: give a GCC it accepts in the site config (host_compiler: {\"%lu\": /path/to/g++}) and regenerate",
                             who, path, from, host_compiler_kind_name(h.kind), h.version, header, cuda_major);
}

void check_nvcc(const struct validate_module *t, const struct validate_options *o, struct check *ret)
{
        unsigned timeout = o->timeout ? o->timeout : DEFAULT_TIMEOUT;
        _cleanup_free_ char *nvcc = NULL, *header = NULL, *host = NULL, *out = NULL;
        _cleanup_(validate_scratch_removep) char *dir = NULL;
        _cleanup_strbuf_ struct strbuf hc = STRBUF_INIT;
        _cleanup_(strv_release) struct strv argv = { 0 }, env = { 0 };
        _cleanup_(child_release) struct child c = { .out = STRBUF_INIT, .err = STRBUF_INIT };
        _cleanup_(child_release) struct child run = { .out = STRBUF_INIT, .err = STRBUF_INIT };
        struct findings f = FINDINGS_INIT;
        struct host_limits lim;
        const char *from = NULL, *cmake_host;
        unsigned long major;
        bool limits_known;
        int r, err = 0;

        ret->id = "nvcc";
        if (!o->compile) {
                check_set(ret, CHECK_SKIP, "the build checks were not asked for");
                return;
        }
        if (t->kind != component_toolkit()) {
                check_set(ret, CHECK_SKIP, "not a %s module: no nvcc to check", component_toolkit()->label);
                return;
        }
        nvcc = process_find_program("nvcc", t->env, &err);
        if (!nvcc) {
                check_set(ret, CHECK_SKIP, "the module's PATH has no executable nvcc");
                return;
        }
        if (toolchain_refused(t, o, "the nvcc check", ret))
                return;
        toolchain_env(t, o, NULL, &env);
        major = toolkit_major(t, nvcc);

        dir = validate_scratch_new("nvcc", ret);
        if (!dir)
                goto done_early;
        if (validate_scratch_write(dir, "cudamod-nvcc.cu", nvcc_program, ret) < 0)
                goto done_early;

        /* The host compilers, against what the toolkit accepts. */
        header = host_config_find(t, nvcc, &hc);
        limits_known = header && host_config_parse(hc.buf, hc.len, &lim) == 0;
        if (!header)
                findings_add(&f, CHECK_WARN, "no crt/host_config.h in the module's include directories: the host compiler was not compared with what the toolkit accepts");
        else if (!limits_known)
                findings_add(&f, CHECK_WARN, "'%s' states no GCC or clang limit: the host compiler was not compared", header);
        else if (!lim.gcc_enforced && !lim.clang_enforced)
                findings_add(&f, CHECK_WARN, "'%s' has its host compiler check disabled (no #error under its limits): any host compiler is let through", header);
        host = nvcc_host_compiler(nvcc, strv_exec_items(&env), major, &from, &err);
        {
                _cleanup_free_ char *shown = nvcc_dryrun_host(nvcc, strv_exec_items(&env), dir, timeout);

                /* What nvcc says it runs wins over the reading of its
                 * variables; the reading names where it came from. */
                if (shown && !(host && same_file(host, shown))) {
                        free(host);
                        host = TAKE_PTR(shown);
                        from = "what 'nvcc --dryrun' runs";
                }
        }
        if (host && !o->trust_modulefiles && streq(from, "gcc on nvcc's PATH")) {
                /* A host compiler module's gcc ({module: gcc/11}) is on the
                 * module's PATH, which validate does not start from. */
                const char *mfrom = NULL;
                int merr = 0;
                _cleanup_free_ char *theirs = nvcc_host_compiler(nvcc, t->env, major, &mfrom, &merr);

                if (theirs && !same_file(theirs, host))
                        findings_add(&f, CHECK_WARN,
                                     "the module's PATH gives nvcc the host compiler '%s', which validate does not start: it checked '%s' from its own PATH instead (give --trust-modulefiles to check the module's, or set host_compiler to a path in the site config)",
                                     theirs, host);
        }
        if (!host)
                findings_add(&f, CHECK_FAIL, "nvcc's host compiler (%s) is not found: %s", from,
                             err == EACCES ? "it is not executable" : "install one or set host_compiler in the site config");
        else if (limits_known)
                host_check("nvcc's host compiler", host, from, &lim, header, major, strv_exec_items(&env), timeout, &f);
        cmake_host = env_get(t->env, "CUDAHOSTCXX");
        if (cmake_host && *cmake_host && limits_known) {
                _cleanup_free_ char *p = process_find_program(cmake_host, strv_exec_items(&env), &err);

                if (!p)
                        findings_add(&f, CHECK_FAIL, "CUDAHOSTCXX '%s' (CMake's host compiler) is not found", cmake_host);
                else if (!host || !streq(p, host))
                        host_check("CMake's host compiler", p, "CUDAHOSTCXX", &lim, header, major,
                                   strv_exec_items(&env), timeout, &f);
        }

        /* Compile, link and start the program. */
        strv_add(&argv, nvcc);
        strv_add(&argv, "-cudart");
        strv_add(&argv, "shared");
        strv_add(&argv, "-o");
        strv_add(&argv, "cudamod-nvcc");
        strv_add(&argv, "cudamod-nvcc.cu");
        strv_add(&argv, "-ldl");
        r = process_run(nvcc, strv_exec_items(&argv), strv_exec_items(&env), dir, timeout, &c);
        if (r < 0 || c.exec_errno) {
                findings_add(&f, CHECK_FAIL, "'%s' could not be started: %s", nvcc, strerror(r < 0 ? -r : c.exec_errno));
                goto done;
        }
        if (c.timed_out) {
                findings_add(&f, CHECK_FAIL, "'%s' timed out after %u s, killed", nvcc, timeout);
                goto done;
        }
        if (!child_succeeded(&c)) {
                _cleanup_free_ char *ending = child_ending(&c);
                _cleanup_free_ char *errors = validate_compiler_errors(c.err.len ? c.err.buf : c.out.buf, ERROR_LINES);

                findings_add(&f, CHECK_FAIL, "a .cu program does not build with '%s -cudart shared' and the module's environment (%s)%s:%s",
                             nvcc, ending, known_cause(c.out.buf, c.err.buf), errors);
                goto done;
        }
        {
                _cleanup_free_ char *prog = path_join(dir, "cudamod-nvcc");
                char *pargv[] = { prog, NULL };
                _cleanup_free_ char *lib = NULL, *error = NULL, *devices = NULL, *kernel = NULL, *ending = NULL;

                r = process_run(prog, pargv, strv_exec_items(&env), dir, timeout, &run);
                if (r < 0 || run.exec_errno || !child_succeeded(&run)) {
                        ending = r < 0 || run.exec_errno ? xstrdup(strerror(r < 0 ? -r : run.exec_errno))
                                                         : child_ending(&run);
                        _cleanup_free_ char *errors = validate_compiler_errors(run.err.len ? run.err.buf : run.out.buf, ERROR_LINES);

                        findings_add(&f, CHECK_FAIL, "a .cu program built with '%s' does not run with the module's environment (%s):%s",
                                     nvcc, ending, errors);
                        goto done;
                }
                lib = output_field(run.out.buf, "cudart");
                error = output_field(run.out.buf, "error");
                devices = output_field(run.out.buf, "devices");
                kernel = output_field(run.out.buf, "kernel");
                if (!lib || streq(lib, "?"))
                        findings_add(&f, CHECK_WARN, "the program built with '%s' ran, but could not tell which libcudart it loaded", nvcc);
                else if (!dir_listed(&t->own_libdirs, lib))
                        findings_add(&f, CHECK_FAIL, "the program built with '%s' loaded '%s', not the module's libcudart: LD_LIBRARY_PATH does not put the module's library directory first",
                                     nvcc, lib);
                if (error)
                        out = xasprintf("cudaGetDeviceCount returned %s%s", error,
                                        startswith(error, "35 ") ? " (no driver here, or one older than the runtime)"
                                        : startswith(error, "100 ") ? " (no CUDA device here)" : "");
                else if (kernel && startswith(kernel, "42 0 "))
                        out = xasprintf("%s device(s), the kernel ran on device 0", devices ? devices : "?");
                else if (kernel) {
                        /* "H ERR NAME": what it wrote, and the error of cudaMalloc or cudaMemcpy. */
                        const char *name = strchr(kernel, ' ');

                        name = name ? strchr(name + 1, ' ') : NULL;
                        findings_add(&f, CHECK_FAIL, "the program built with '%s' found %s device(s), but its kernel did not run on device 0: %s",
                                     nvcc, devices ? devices : "?", name ? name + 1 : kernel);
                        out = xasprintf("%s device(s)", devices ? devices : "?");
                } else
                        out = xasprintf("%s device(s)", devices ? devices : "?");
                findings_add(&f, CHECK_PASS, "a .cu program (a kernel and cudaGetDeviceCount) built with '%s -cudart shared', linked and ran with the module's libcudart ('%s'): %s",
                             nvcc, lib ? lib : "?", out);
        }
done:
        if (f.worst == CHECK_PASS)
                check_set(ret, CHECK_PASS, "%s", f.facts.buf);
        else
                check_set(ret, f.worst, "%s%s%s", f.problems.buf, f.facts.len ? "\n" : "", f.facts.buf);
        findings_release(&f);
        return;
done_early:
        findings_release(&f);
}

/* --- cmake ------------------------------------------------------------- */

static const char cmake_project[] =
        "cmake_minimum_required(VERSION 3.18)\n"
        "project(cudamod_cmake_check LANGUAGES CXX)\n"
        "enable_language(CUDA)\n"
        "find_package(CUDAToolkit REQUIRED)\n"
        "get_filename_component(cudamod_cudart \"${CUDA_cudart_LIBRARY}\" REALPATH)\n"
        "message(STATUS \"cudamod:compiler=${CMAKE_CUDA_COMPILER}\")\n"
        "message(STATUS \"cudamod:compiler_version=${CMAKE_CUDA_COMPILER_VERSION}\")\n"
        "message(STATUS \"cudamod:host_compiler=${CMAKE_CUDA_HOST_COMPILER}\")\n"
        "message(STATUS \"cudamod:toolkit_version=${CUDAToolkit_VERSION}\")\n"
        "message(STATUS \"cudamod:bin_dir=${CUDAToolkit_BIN_DIR}\")\n"
        "message(STATUS \"cudamod:include_dirs=${CUDAToolkit_INCLUDE_DIRS}\")\n"
        "message(STATUS \"cudamod:cudart=${cudamod_cudart}\")\n";

static char *cmake_field(const char *out, const char *key)
{
        _cleanup_free_ char *tag = xasprintf("-- cudamod:%s=", key);
        const char *p = strstr(out, tag);
        const char *e;

        if (!p)
                return NULL;
        p += strlen(tag);
        e = strchrnul(p, '\n');
        return xstrndup(p, (size_t)(e - p));
}

static bool same_file(const char *a, const char *b)
{
        struct stat sa, sb;

        return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void check_cmake(const struct validate_module *t, const struct validate_options *o, struct check *ret)
{
        unsigned timeout = o->timeout ? o->timeout : DEFAULT_TIMEOUT;
        _cleanup_free_ char *cmake = NULL, *nvcc = NULL, *search = NULL, *build = NULL, *cxx = NULL, *make = NULL,
                            *nvcc_dir = NULL;
        _cleanup_free_ char *compiler = NULL, *cver = NULL, *tver = NULL, *bindir = NULL, *cudart = NULL,
                            *hostc = NULL;
        _cleanup_(validate_scratch_removep) char *dir = NULL;
        _cleanup_(strv_release) struct strv argv = { 0 }, env = { 0 };
        _cleanup_(child_release) struct child c = { .out = STRBUF_INIT, .err = STRBUF_INIT };
        struct findings f = FINDINGS_INIT;
        unsigned long major;
        int r, err = 0;

        ret->id = "cmake";
        if (!o->compile) {
                check_set(ret, CHECK_SKIP, "the build checks were not asked for");
                return;
        }
        if (t->kind != component_toolkit()) {
                check_set(ret, CHECK_SKIP, "not a %s module: nothing for CMake's CUDA support to find",
                          component_toolkit()->label);
                return;
        }
        nvcc = process_find_program("nvcc", t->env, &err);
        if (!nvcc) {
                check_set(ret, CHECK_SKIP, "the module's PATH has no executable nvcc: CMake's enable_language(CUDA) needs one");
                return;
        }
        if (toolchain_refused(t, o, "the cmake check", ret))
                return;
        /* cmake is looked up as the C compiler is: in cudamod's PATH (a
         * site's cmake module need not be loaded with the CUDA one). */
        search = xasprintf("PATH=%s", o->cc_path ? o->cc_path : "/usr/bin:/bin");
        cmake = process_find_program(o->cmake ? o->cmake : "cmake", (char *[]){ search, NULL }, &err);
        if (!cmake) {
                check_set(ret, CHECK_SKIP, "no cmake in cudamod's PATH (%s): install CMake to check what a CMake build (PyTorch's) finds",
                          search + 5);
                return;
        }
        if (!o->trust_modulefiles) {
                /* CMake's C++ compiler and build tool are cudamod's, named
                 * on its command line: else CMake looks for them in each
                 * CMAKE_PREFIX_PATH entry's bin first, the module's. */
                cxx = process_find_program(o->cxx ? o->cxx : "c++", (char *[]){ search, NULL }, &err);
                make = process_find_program("gmake", (char *[]){ search, NULL }, &err);
                if (!make)
                        make = process_find_program("make", (char *[]){ search, NULL }, &err);
                if (!cxx || !make) {
                        check_set(ret, CHECK_FAIL, "no %s in cudamod's PATH (%s): CMake needs one to configure a project; install one where validate runs",
                                  !cxx ? "C++ compiler (c++)" : "build tool (gmake or make)", search + 5);
                        return;
                }
        }
        dir = validate_scratch_new("cmake", ret);
        if (!dir || validate_scratch_write(dir, "CMakeLists.txt", cmake_project, ret) < 0) {
                findings_release(&f);
                return;
        }
        build = path_join(dir, "build");
        /* What CMake finds nvcc by: CUDACXX, CMAKE_PREFIX_PATH, or PATH,
         * where the module's nvcc comes after cudamod's directories. */
        nvcc_dir = path_dirname(nvcc);
        toolchain_env(t, o, nvcc_dir, &env);
        strv_add(&argv, cmake);
        strv_add(&argv, "-S");
        strv_add(&argv, dir);
        strv_add(&argv, "-B");
        strv_add(&argv, build);
        if (cxx) {
                _cleanup_free_ char *cxx_def = xasprintf("-DCMAKE_CXX_COMPILER=%s", cxx);
                _cleanup_free_ char *make_def = xasprintf("-DCMAKE_MAKE_PROGRAM=%s", make);

                strv_add(&argv, "-G");
                strv_add(&argv, "Unix Makefiles");
                strv_add(&argv, cxx_def);
                strv_add(&argv, make_def);
        }
        r = process_run(cmake, strv_exec_items(&argv), strv_exec_items(&env), dir, timeout, &c);
        if (r < 0 || c.exec_errno) {
                check_set(ret, CHECK_FAIL, "'%s' could not be started: %s", cmake, strerror(r < 0 ? -r : c.exec_errno));
                return;
        }
        if (c.timed_out) {
                check_set(ret, CHECK_FAIL, "'%s' timed out after %u s, killed", cmake, timeout);
                return;
        }
        if (!child_succeeded(&c)) {
                _cleanup_free_ char *ending = child_ending(&c);
                _cleanup_free_ char *errors = validate_compiler_errors(c.err.len ? c.err.buf : c.out.buf, ERROR_LINES);

                check_set(ret, CHECK_FAIL, "CMake's enable_language(CUDA) and find_package(CUDAToolkit) fail with the module's environment ('%s', %s)%s:%s",
                          cmake, ending, known_cause(c.out.buf, c.err.buf), errors);
                return;
        }
        compiler = cmake_field(c.out.buf, "compiler");
        cver = cmake_field(c.out.buf, "compiler_version");
        tver = cmake_field(c.out.buf, "toolkit_version");
        bindir = cmake_field(c.out.buf, "bin_dir");
        cudart = cmake_field(c.out.buf, "cudart");
        hostc = cmake_field(c.out.buf, "host_compiler");

        if (!compiler || !same_file(compiler, nvcc))
                findings_add(&f, CHECK_FAIL, "CMake's CUDA compiler is '%s', not the module's nvcc '%s'",
                             compiler ? compiler : "unknown", nvcc);
        {
                _cleanup_free_ char *nbin = path_dirname(nvcc);

                if (!bindir || !same_file(bindir, nbin))
                        findings_add(&f, CHECK_FAIL, "find_package(CUDAToolkit) found the toolkit in '%s', not the module's '%s'",
                                     bindir ? bindir : "nowhere", nbin);
        }
        if (!cudart || !*cudart || !dir_listed(&t->own_libdirs, cudart))
                findings_add(&f, CHECK_FAIL, "find_package(CUDAToolkit) found libcudart '%s', not one in the module's library directories",
                             cudart && *cudart ? cudart : "nowhere");
        if (cver && tver && !streq(cver, tver))
                findings_add(&f, CHECK_FAIL, "CMake's nvcc is version %s and find_package(CUDAToolkit) found %s (PyTorch stops at 'Found two conflicting CUDA versions')",
                             cver, tver);
        major = toolkit_major(t, nvcc);
        if (major && tver && strtoul(tver, NULL, 10) != major)
                findings_add(&f, CHECK_FAIL, "find_package(CUDAToolkit) found CUDA %s, and the module's headers say CUDA %lu",
                             tver, major);
        if (f.worst == CHECK_PASS)
                check_set(ret, CHECK_PASS,
                          "CMake ('%s') with enable_language(CUDA) and find_package(CUDAToolkit) found the module's toolkit: nvcc '%s' %s, CUDAToolkit %s, cudart '%s'%s%s%s",
                          cmake, compiler, cver ? cver : "?", tver ? tver : "?", cudart, hostc && *hostc ? ", host compiler '" : "",
                          hostc && *hostc ? hostc : "", hostc && *hostc ? "'" : "");
        else
                check_set(ret, f.worst, "%s", f.problems.buf);
        findings_release(&f);
}
