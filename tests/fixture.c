/* fixture.c: builders of fake install trees (see fixture.h). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "strbuf.h"
#include "util.h"
#include "detect.h"
#include "util-file.h"
#include "write-name.h"

char *fx_new(void)
{
        const char *tmp = getenv("TMPDIR");
        char *root = xasprintf("%s/cudamod-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");

        ck_assert_msg(mkdtemp(root) != NULL, "mkdtemp: %s", strerror(errno));
        /* Tests that drop privileges need to traverse the tree. */
        ck_assert_int_eq(chmod(root, 0755), 0);
        return root;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR)
                rmdir(path);
        else
                unlink(path);
        return 0;
}

static int chmod_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        if (flag == FTW_D || flag == FTW_DNR)
                chmod(path, 0755);
        return 0;
}

void fx_free(char *root)
{
        if (!root)
                return;
        nftw(root, chmod_one, 32, FTW_PHYS);
        nftw(root, rm_one, 32, FTW_DEPTH | FTW_PHYS);
        free(root);
}

static char *abs_path(const char *root, const char *rel)
{
        return rel[0] == '/' ? xstrdup(rel) : path_join(root, rel);
}

void fx_mkdir(const char *root, const char *rel)
{
        _cleanup_free_ char *p = abs_path(root, rel);

        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        ck_abort_msg("mkdir '%s': %s", p, strerror(errno));
                *s = '/';
        }
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                ck_abort_msg("mkdir '%s': %s", p, strerror(errno));
}

static void mkparent(const char *root, const char *rel)
{
        _cleanup_free_ char *p = abs_path(root, rel);
        _cleanup_free_ char *dir = path_dirname(p);

        fx_mkdir("/", dir);
}

void fx_write(const char *root, const char *rel, const char *content)
{
        _cleanup_free_ char *p = abs_path(root, rel);
        FILE *f;

        mkparent(root, rel);
        f = fopen(p, "we");
        ck_assert_msg(f != NULL, "fopen '%s': %s", p, strerror(errno));
        fputs(content, f);
        ck_assert_int_eq(fclose(f), 0);
}

void fx_symlink(const char *root, const char *rel, const char *target)
{
        _cleanup_free_ char *p = abs_path(root, rel);

        mkparent(root, rel);
        unlink(p);
        ck_assert_msg(symlink(target, p) == 0, "symlink '%s': %s", p, strerror(errno));
}

void fx_elf(const char *root, const char *rel, const struct elfstub *s)
{
        _cleanup_free_ char *p = abs_path(root, rel);
        int r;

        mkparent(root, rel);
        r = elfstub_write(AT_FDCWD, p, s);
        ck_assert_msg(r == 0, "elfstub_write '%s': %s", p, strerror(-r));
}

void fx_library(const char *root, const char *dir, const char *stem, const char *soname_ver,
                const char *full_ver, unsigned machine, const char *const *needed,
                const char *const *strings)
{
        _cleanup_free_ char *soname = xasprintf("%s.so.%s", stem, soname_ver);
        _cleanup_free_ char *real = full_ver ? xasprintf("%s.so.%s", stem, full_ver) : xstrdup(soname);
        _cleanup_free_ char *real_rel = path_join(dir, real);
        struct elfstub s = {
                .machine = machine, .soname = soname, .needed = needed, .strings = strings,
        };

        fx_elf(root, real_rel, &s);
        if (full_ver) {
                _cleanup_free_ char *link = path_join(dir, soname);
                _cleanup_free_ char *dev = xasprintf("%s/%s.so", dir, stem);
                fx_symlink(root, link, real);
                fx_symlink(root, dev, soname);
        }
}

static unsigned machine_of(const char *triple)
{
        if (startswith(triple, "sbsa") || startswith(triple, "aarch64"))
                return ELFSTUB_AARCH64;
        if (startswith(triple, "ppc64le"))
                return ELFSTUB_PPC64;
        return ELFSTUB_X86_64;
}

static unsigned long major_of(const char *version)
{
        return strtoul(version, NULL, 10);
}

/* MAJOR*1000 + MINOR*10 of "12.4". */
static long cuda_code(const char *version)
{
        char *end;
        long major = strtol(version, &end, 10), minor = 0;

        if (*end == '.')
                minor = strtol(end + 1, NULL, 10);
        return major * 1000 + minor * 10;
}

void fx_cuda_toolkit(const char *root, const char *prefix, const struct fx_cuda *c)
{
        const char *triple = c->triple ? c->triple : "x86_64-linux";
        unsigned machine = machine_of(triple);
        unsigned long major = major_of(c->version);
        _cleanup_free_ char *tdir = xasprintf("%s/targets/%s", prefix, triple);
        _cleanup_free_ char *inc = xasprintf("%s/include", tdir), *lib = xasprintf("%s/lib", tdir);
        _cleanup_free_ char *cuda_h = NULL, *rt_h = NULL, *nvcc_str = NULL, *p = NULL;
        _cleanup_free_ char *cudart_so = major >= 11 ? xasprintf(major == 11 ? "11.0" : "%lu", major)
                                                     : xstrdup(c->version);
        _cleanup_free_ char *maj = xasprintf("%lu", major);
        _cleanup_free_ char *lt = xasprintf("libcublasLt.so.%lu", major);
        const char *cublas_needed[] = { lt, "libc.so.6", NULL };
        long code = cuda_code(c->version);

        /* As nvcc --version prints it: the first line ends at a newline. */
        nvcc_str = xasprintf("Cuda compilation tools, release %s, V%s\nBuild cuda_%s.r%s/compiler.31833905_0",
                             c->version, c->nvcc, c->version, c->version);
        fx_elf(root, p = xasprintf("%s/bin/nvcc", prefix),
               &(struct elfstub){ .machine = machine, .strings = (const char *const[]){ nvcc_str, NULL } });
        free(TAKE_PTR(p));
        fx_write(root, p = xasprintf("%s/bin/nvcc.profile", prefix), "TOP = $(_HERE_)/..\n");
        free(TAKE_PTR(p));

        cuda_h = xasprintf("#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__\n#define CUDA_VERSION %ld\n#endif\n", code);
        rt_h = xasprintf("#define CUDART_VERSION  %ld\n", code);
        fx_write(root, p = path_join(inc, "cuda.h"), cuda_h);
        free(TAKE_PTR(p));
        fx_write(root, p = path_join(inc, "cuda_runtime_api.h"), rt_h);
        free(TAKE_PTR(p));
        {
                _cleanup_free_ char *t = xasprintf("targets/%s/include", triple);
                fx_symlink(root, p = path_join(prefix, "include"), t);
                free(TAKE_PTR(p));
        }
        /* CCCL's CUB, as the toolkits ship it: include/cub from CUDA 11,
         * include/cccl/cub from CUDA 13 (PyTorch 2.6's FindCUB looks for
         * the former only). */
        if (major >= 11) {
                fx_write(root, p = path_join(inc, major >= 13 ? "cccl/cub/cub.cuh" : "cub/cub.cuh"),
                         "#pragma once\n");
                free(TAKE_PTR(p));
        }

        fx_library(root, lib, "libcudart", cudart_so, c->cudart, machine, NULL, NULL);
        if (!c->no_math) {
                fx_library(root, lib, "libcublasLt", maj, NULL, machine, NULL, NULL);
                fx_library(root, lib, "libcublas", maj, NULL, machine, cublas_needed, NULL);
        }
        fx_library(root, lib, "libnvrtc", maj, NULL, machine, NULL, NULL);
        if (c->cusparse && major >= 12) {
                _cleanup_free_ char *jit = xasprintf("libnvJitLink.so.%lu", major);
                /* cuSPARSE has its own version, soname libcusparse.so.12 in
                 * CUDA 12 (12.3.1 in 12.4) and 13 (12.6.3 in 13.0). */
                long minor = code % 1000 / 10;
                _cleanup_free_ char *sparse_ver = major == 12 ? xasprintf("12.%ld.1.170", minor > 0 ? minor - 1 : 0)
                                                              : xasprintf("12.%ld.3.3", minor + 6);

                fx_library(root, lib, "libnvJitLink", maj, c->cudart, machine, NULL, NULL);
                fx_library(root, lib, "libcusparse", "12", sparse_ver, machine,
                           (const char *const[]){ jit, NULL }, NULL);
        }
        fx_elf(root, p = path_join(lib, "stubs/libcuda.so"),
               &(struct elfstub){ .machine = machine, .soname = "libcuda.so.1" });
        free(TAKE_PTR(p));
        {
                _cleanup_free_ char *t = xasprintf("targets/%s/lib", triple);
                fx_symlink(root, p = path_join(prefix, "lib64"), t);
                free(TAKE_PTR(p));
        }
        fx_library(root, p = path_join(prefix, "nvvm/lib64"), "libnvvm", "4", NULL, machine, NULL, NULL);
        free(TAKE_PTR(p));
        if (c->compat) {
                /* libcuda.so.<driver> with its libcuda.so.1 and libcuda.so
                 * links, and the driver's JIT, NVVM and debugger libraries
                 * (soname links as the package has them). */
                static const struct { const char *stem, *soname; } libs[] = {
                        { "libcuda", "1" },
                        { "libnvidia-ptxjitcompiler", "1" },
                        { "libnvidia-nvvm", "4" },
                        { "libcudadebugger", "1" },
                };
                _cleanup_free_ char *cdir = path_join(prefix, c->compat_dir ? c->compat_dir : "compat");

                for (size_t i = 0; i < ELEMENTSOF(libs); i++)
                        fx_library(root, cdir, libs[i].stem, libs[i].soname, c->compat, machine, NULL, NULL);
        }
        if (c->cupti) {
                fx_library(root, p = path_join(prefix, "extras/CUPTI/lib64"), "libcupti", maj, NULL,
                           machine, NULL, NULL);
                free(TAKE_PTR(p));
                fx_write(root, p = path_join(prefix, "extras/CUPTI/include/cupti.h"), "/* cupti */\n");
                free(TAKE_PTR(p));
        }

        switch (c->version_file) {
        case FX_VERSION_JSON:
        case FX_VERSION_JSON_DATE: {
                _cleanup_free_ char *cuda_value = c->version_file == FX_VERSION_JSON
                                                          ? xstrdup(c->release)
                                                          : xasprintf("%s.20241114", c->version);
                _cleanup_free_ char *json = xasprintf(
                        "{\n   \"cuda\" : {\n      \"name\" : \"CUDA SDK\",\n      \"version\" : \"%s\"\n   },\n"
                        "   \"cuda_cudart\" : {\n      \"name\" : \"CUDA Runtime (cudart)\",\n      \"version\" : \"%s\"\n   },\n"
                        "   \"cuda_nvcc\" : {\n      \"name\" : \"CUDA NVCC\",\n      \"version\" : \"%s\"\n   }\n}\n",
                        cuda_value, c->cudart, c->nvcc);
                fx_write(root, p = path_join(prefix, "version.json"), json);
                free(TAKE_PTR(p));
                break;
        }
        case FX_VERSION_TXT: {
                _cleanup_free_ char *txt = xasprintf("CUDA Version %s\n", c->release);
                fx_write(root, p = path_join(prefix, "version.txt"), txt);
                free(TAKE_PTR(p));
                break;
        }
        case FX_VERSION_NONE:
                break;
        }
}

static void cudnn_headers(const char *root, const char *inc, const char *version)
{
        unsigned long a = 0, b = 0, c = 0;
        _cleanup_free_ char *h = NULL, *p = NULL;

        ck_assert_int_eq(sscanf(version, "%lu.%lu.%lu", &a, &b, &c), 3);
        h = xasprintf("#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n"
                      "#define CUDNN_MAJOR %lu\n#define CUDNN_MINOR %lu\n#define CUDNN_PATCHLEVEL %lu\n\n"
                      "#define CUDNN_VERSION (CUDNN_MAJOR * %s + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
                      "#define CUDNN_MAX_SM_MAJOR_NUMBER 12\n#define CUDNN_SM_90 900\n#endif\n",
                      a, b, c, a >= 9 ? "10000" : "1000");
        fx_write(root, p = path_join(inc, "cudnn_version.h"), h);
        free(TAKE_PTR(p));
        fx_write(root, p = path_join(inc, "cudnn.h"), "#include \"cudnn_version.h\"\n");
}

void fx_cudnn(const char *root, const char *prefix, const struct fx_cudnn *c)
{
        static const char *const v9[] = {
                "libcudnn_graph", "libcudnn_ops", "libcudnn_cnn", "libcudnn_adv", "libcudnn_heuristic",
                "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled", NULL,
        };
        static const char *const v8[] = {
                "libcudnn_ops_infer", "libcudnn_ops_train", "libcudnn_cnn_infer", "libcudnn_cnn_train",
                "libcudnn_adv_infer", "libcudnn_adv_train", NULL,
        };
        unsigned long major = major_of(c->version);
        _cleanup_free_ char *lib = path_join(prefix, c->lib ? c->lib : "lib");
        _cleanup_free_ char *inc = path_join(prefix, c->include ? c->include : "include");
        _cleanup_free_ char *maj = xasprintf("%lu", major);
        _cleanup_free_ char *lt = xasprintf("libcublasLt.so.%u", c->cuda_major);
        _cleanup_free_ char *blas = xasprintf("libcublas.so.%u", c->cuda_major);
        _cleanup_free_ char *rtc = xasprintf("libnvrtc.so.%u", c->cuda_major);
        const char *full = c->soname_only ? NULL : c->version;
        const char *const *subs = major >= 9 ? v9 : v8;

        cudnn_headers(root, inc, c->version);
        fx_library(root, lib, "libcudnn", maj, full, c->machine, NULL, NULL);
        for (const char *const *s = subs; *s; s++) {
                const char *const *needed = NULL, *const *strings = NULL;
                const char *n8[] = { blas, lt, "libc.so.6", NULL };
                const char *n9[] = { "libcudnn_graph.so.9", "libz.so.1", NULL };
                const char *str9[] = { lt, rtc, "libnvrtc.so.%d", NULL };

                if (major == 8 && streq(*s, "libcudnn_ops_infer") && c->cuda_major)
                        needed = n8;
                if (major >= 9 && !streq(*s, "libcudnn_graph"))
                        needed = n9;
                if (major >= 9 && c->cuda_major &&
                    (streq(*s, "libcudnn_engines_precompiled") || streq(*s, "libcudnn_adv")))
                        strings = str9;
                fx_library(root, lib, *s, maj, full, c->machine, needed, strings);
        }
}

void fx_nccl(const char *root, const char *prefix, const struct fx_nccl *c)
{
        unsigned long a = 0, b = 0, d = 0;
        _cleanup_free_ char *lib = path_join(prefix, c->lib ? c->lib : "lib");
        _cleanup_free_ char *inc = path_join(prefix, c->include ? c->include : "include");
        _cleanup_free_ char *h = NULL, *p = NULL, *vs = NULL, *pc = NULL;

        ck_assert_int_eq(sscanf(c->version, "%lu.%lu.%lu", &a, &b, &d), 3);
        h = xasprintf("#ifndef NCCL_H_\n#define NCCL_H_\n#include <cuda_runtime.h>\n"
                      "#define NCCL_MAJOR %lu\n#define NCCL_MINOR %lu\n#define NCCL_PATCH %lu\n"
                      "#define NCCL_SUFFIX \"\"\n\n#define NCCL_VERSION_CODE %lu\n"
                      "#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))\n#endif\n",
                      a, b, d, (a <= 2 && b <= 8) ? a * 1000 + b * 100 + d : a * 10000 + b * 100 + d);
        fx_write(root, p = path_join(inc, "nccl.h"), h);
        free(TAKE_PTR(p));
        vs = c->cuda ? xasprintf("NCCL version %s+cuda%s", c->version, c->cuda) : NULL;
        fx_library(root, lib, "libnccl", "2", c->soname_only ? NULL : c->version, c->machine,
                   (const char *const[]){ "libpthread.so.0", "libc.so.6", NULL },
                   vs ? (const char *const[]){ vs, NULL } : NULL);
        pc = xasprintf("prefix=/usr/local\nlibdir=${prefix}/lib\nName: nccl\nVersion: %s\n", c->version);
        fx_write(root, p = path_join(lib, "pkgconfig/nccl.pc"), pc);
}

void fx_magma(const char *root, const char *prefix, const struct fx_magma *c)
{
        unsigned long a = 0, b = 0, d = 0;
        _cleanup_free_ char *lib = path_join(prefix, c->lib ? c->lib : "lib");
        _cleanup_free_ char *inc = path_join(prefix, "include");
        _cleanup_free_ char *h = NULL, *p = NULL, *pc = NULL, *cudart = NULL, *cublas = NULL;

        ck_assert_int_eq(sscanf(c->version, "%lu.%lu.%lu", &a, &b, &d), 3);
        h = xasprintf("#ifndef MAGMA_TYPES_H\n#define MAGMA_TYPES_H\n\n#include <stdint.h>\n\n"
                      "// MAGMA version\n#define MAGMA_VERSION_MAJOR %lu\n#define MAGMA_VERSION_MINOR %lu\n"
                      "#define MAGMA_VERSION_MICRO %lu\n\n"
                      "// stage is \"svn\", \"beta#\", \"rc#\" (release candidate), or blank (\"\") for final release\n"
                      "#define MAGMA_VERSION_STAGE \"\"\n\n%s"
                      "#if defined(MAGMA_ILP64) || defined(MKL_ILP64)\ntypedef long long int magma_int_t;\n"
                      "#else\ntypedef int magma_int_t;\n#endif\n\n#endif\n",
                      a, b, d, c->ilp64 ? "#define MAGMA_ILP64\n\n" : "");
        fx_write(root, p = path_join(inc, "magma_types.h"), h);
        free(TAKE_PTR(p));
        fx_write(root, p = path_join(inc, "magma_v2.h"),
                 "#ifndef MAGMA_V2_H\n#define MAGMA_V2_H\n#include \"magma_types.h\"\n"
                 "void magma_version(magma_int_t *major, magma_int_t *minor, magma_int_t *micro);\n#endif\n");
        free(TAKE_PTR(p));
        fx_write(root, p = path_join(inc, "magma.h"), "#include \"magma_v2.h\"\n");
        free(TAKE_PTR(p));
        if (c->static_only) {
                fx_write(root, p = path_join(lib, "libmagma.a"), "!<arch>\n");
                free(TAKE_PTR(p));
        } else {
                const char *needed[6] = { NULL };
                size_t n = 0;

                cudart = xasprintf("libcudart.so.%u", c->cuda_major);
                cublas = xasprintf("libcublas.so.%u", c->cuda_major);
                if (c->cuda_major) {
                        needed[n++] = cudart;
                        needed[n++] = cublas;
                        needed[n++] = c->cuda_major >= 12 ? "libcusparse.so.12" : "libcusparse.so.11";
                }
                needed[n++] = "libstdc++.so.6";
                needed[n++] = "libc.so.6";
                fx_elf(root, p = path_join(lib, "libmagma.so"),
                       &(struct elfstub){ .machine = c->machine, .soname = c->no_soname ? NULL : "libmagma.so",
                                          .needed = needed });
                free(TAKE_PTR(p));
        }
        pc = xasprintf("prefix=/usr/local/magma\nlibdir=${prefix}/lib\nincludedir=${prefix}/include\n\n"
                       "Name: magma\nDescription: Matrix Algebra on GPU and Multicore Architectures\n"
                       "Version: %s\nCflags: -I${includedir}\nLibs: -L${libdir} -lmagma\n",
                       c->version);
        fx_write(root, p = path_join(lib, "pkgconfig/magma.pc"), pc);
}

void fx_cudss(const char *root, const char *prefix, const struct fx_cudss *c)
{
        unsigned long a = 0, b = 0, d = 0;
        _cleanup_free_ char *lib = path_join(prefix, c->lib ? c->lib : "lib");
        _cleanup_free_ char *inc = path_join(prefix, c->include ? c->include : "include");
        _cleanup_free_ char *h = NULL, *p = NULL;
        _cleanup_free_ char *blas = xasprintf("libcublas.so.%u", c->cuda_major);
        _cleanup_free_ char *lt = xasprintf("libcublasLt.so.%u", c->cuda_major);
        const char *with_cublas[] = { blas, lt, "libstdc++.so.6", "libc.so.6", NULL };
        const char *without[] = { "libstdc++.so.6", "libc.so.6", NULL };
        const char *full = c->soname_only ? NULL : c->version;

        ck_assert_int_eq(sscanf(c->version, "%lu.%lu.%lu", &a, &b, &d), 3);
        h = xasprintf("#ifndef CUDSS_H_\n#define CUDSS_H_\n#include <library_types.h>\n"
                      "#define CUDSS_VER_MAJOR %lu\n#define CUDSS_VER_MINOR %lu\n#define CUDSS_VER_PATCH %lu\n"
                      "#define CUDSS_VERSION (CUDSS_VER_MAJOR * 10000 + CUDSS_VER_MINOR * 100 + CUDSS_VER_PATCH)\n"
                      "#endif\n",
                      a, b, d);
        fx_write(root, p = path_join(inc, "cudss.h"), h);
        free(TAKE_PTR(p));
        fx_write(root, p = path_join(inc, "cudss_threading_interface.h"), "/* threading layer API */\n");
        fx_library(root, lib, "libcudss", "0", full, c->machine, c->cuda_major ? with_cublas : without, NULL);
        fx_library(root, lib, "libcudss_mtlayer_gomp", "0", full, c->machine,
                   (const char *const[]){ "libgomp.so.1", "libc.so.6", NULL }, NULL);
}

void fx_cusparselt(const char *root, const char *prefix, const struct fx_cusparselt *c)
{
        unsigned long a = 0, b = 0, d = 0, e = 0;
        _cleanup_free_ char *lib = path_join(prefix, c->lib ? c->lib : "lib");
        _cleanup_free_ char *inc = path_join(prefix, c->include ? c->include : "include");
        _cleanup_free_ char *h = NULL, *p = NULL;

        ck_assert_int_eq(sscanf(c->version, "%lu.%lu.%lu.%lu", &a, &b, &d, &e), 4);
        h = xasprintf("#if !defined(CUSPARSELT_HEADER_)\n#define CUSPARSELT_HEADER_\n\n"
                      "#include \"cusparse.h\"      // cusparseStatus_t\n\n#include <cstddef>\n\n"
                      "#define CUSPARSELT_VER_MAJOR %lu\n#define CUSPARSELT_VER_MINOR %lu\n"
                      "#define CUSPARSELT_VER_PATCH %lu\n#define CUSPARSELT_VER_BUILD %lu\n"
                      "#define CUSPARSELT_VERSION (CUSPARSELT_VER_MAJOR * 1000 + \\\n"
                      "                            CUSPARSELT_VER_MINOR *  100 + \\\n"
                      "                            CUSPARSELT_VER_PATCH)\n#endif\n",
                      a, b, d, e);
        if (!c->no_header)
                fx_write(root, p = path_join(inc, "cusparseLt.h"), h);
        fx_library(root, lib, "libcusparseLt", "0", c->soname_only ? NULL : c->version, c->machine,
                   (const char *const[]){ "libdl.so.2", "libpthread.so.0", "libc.so.6", NULL }, c->strings);
}

void fx_cutensor(const char *root, const char *prefix, const struct fx_cutensor *c)
{
        unsigned long a = 0, b = 0, d = 0;
        _cleanup_free_ char *lib = path_join(prefix, c->lib ? c->lib : "lib");
        _cleanup_free_ char *inc = path_join(prefix, c->include ? c->include : "include");
        _cleanup_free_ char *h = NULL, *p = NULL;
        _cleanup_free_ char *lt = xasprintf("libcublasLt.so.%u", c->cuda_major);
        const char *with_cublas[] = { lt, "libstdc++.so.6", "libc.so.6", NULL };
        const char *without[] = { "libstdc++.so.6", "libc.so.6", NULL };
        const char *full = c->soname_only ? NULL : c->version;

        ck_assert_int_eq(sscanf(c->version, "%lu.%lu.%lu", &a, &b, &d), 3);
        if (!c->no_header) {
                h = xasprintf("#pragma once\n\n#include <cuda_runtime.h>\n#include <cutensor/types.h>\n\n"
                              "#define CUTENSOR_MAJOR %lu //!< cuTensor major version.\n"
                              "#define CUTENSOR_MINOR %lu //!< cuTensor minor version.\n"
                              "#define CUTENSOR_PATCH %lu //!< cuTensor patch version.\n"
                              "#define CUTENSOR_VERSION (CUTENSOR_MAJOR * 10000 + CUTENSOR_MINOR * 100 + CUTENSOR_PATCH)\n",
                              a, b, d);
                fx_write(root, p = path_join(inc, "cutensor.h"), h);
        }
        fx_library(root, lib, "libcutensor", "2", full, c->machine, c->cuda_major ? with_cublas : without, NULL);
        fx_library(root, lib, "libcutensorMg", "2", full, c->machine,
                   (const char *const[]){ "libcutensor.so.2", "libc.so.6", NULL }, NULL);
}

void fx_nvshmem(const char *root, const char *prefix, const struct fx_nvshmem *c)
{
        unsigned long a = 0, b = 0, d = 0;
        unsigned transport = c->transport ? c->transport : 3;
        _cleanup_free_ char *lib = path_join(prefix, c->lib ? c->lib : "lib");
        _cleanup_free_ char *inc = path_join(prefix, c->include ? c->include : "include");
        _cleanup_free_ char *h = NULL, *p = NULL, *plugin = NULL;

        ck_assert_int_eq(sscanf(c->version, "%lu.%lu.%lu", &a, &b, &d), 3);
        h = xasprintf("#ifndef _NVSHMEM_VERSION_H_\n#define _NVSHMEM_VERSION_H_\n"
                      "#define NVSHMEM_VENDOR_MAJOR_VERSION %lu\n#define NVSHMEM_VENDOR_MINOR_VERSION %lu\n"
                      "#define NVSHMEM_VENDOR_PATCH_VERSION %lu\n#define NVSHMEM_VENDOR_PACKAGE_VERSION 0\n"
                      "#define NVSHMEM_TRANSPORT_PLUGIN_MAJOR_VERSION %u\n"
                      "#define NVSHMEM_BOOTSTRAP_PLUGIN_MAJOR_VERSION 3\n"
                      "#define NVSHMEM_BUILD_VARS \"NVSHMEM_IBGDA_SUPPORT=ON\"\n#endif\n",
                      a, b, d, transport);
        fx_write(root, p = path_join(inc, "non_abi/nvshmem_version.h"), h);
        free(TAKE_PTR(p));
        fx_write(root, p = path_join(inc, "device_host_transport/nvshmem_constants.h"),
                 "/* This is not the NVSHMEM release version */\n#define NVSHMEM_MAJOR_VERSION 1\n"
                 "#define NVSHMEM_MINOR_VERSION 3\n");
        free(TAKE_PTR(p));
        fx_write(root, p = path_join(inc, "nvshmem.h"),
                 "#ifndef _NVSHMEM_H_\n#define _NVSHMEM_H_\n#include \"non_abi/nvshmem_version.h\"\n"
                 "#include \"device_host_transport/nvshmem_constants.h\"\n#endif\n");
        free(TAKE_PTR(p));
        fx_write(root, p = path_join(inc, "nvshmemx.h"),
                 "#ifndef _NVSHMEMX_H_\n#define _NVSHMEMX_H_\n#include \"nvshmem.h\"\n"
                 "#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
                 "void nvshmemx_vendor_get_version_info(int *major, int *minor, int *patch);\n"
                 "#ifdef __cplusplus\n}\n#endif\n#endif\n");
        free(TAKE_PTR(p));
        fx_library(root, lib, "libnvshmem_host", "3", c->soname_only ? NULL : c->version, c->machine,
                   (const char *const[]){ "libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6", NULL },
                   NULL);
        if (!c->no_device) {
                fx_write(root, p = path_join(lib, "libnvshmem_device.a"), "!<arch>\n");
                free(TAKE_PTR(p));
        }
        fx_write(root, p = path_join(lib, "libnvshmem_device.bc"), "BC\xc0\xde");
        free(TAKE_PTR(p));
        fx_library(root, lib, "nvshmem_bootstrap_uid", "3", NULL, c->machine, NULL, NULL);
        plugin = xasprintf("%u", c->plugin_major ? c->plugin_major : transport);
        fx_library(root, lib, "nvshmem_transport_ibrc", plugin, NULL, c->machine, NULL, NULL);
        if (!c->no_bin) {
                fx_write(root, p = path_join(prefix, "bin/nvshmem-info"), "#!/bin/sh\n");
                free(TAKE_PTR(p));
        }
}

void fx_dist_info(const char *root, const char *dir, const char *name, const char *version)
{
        _cleanup_free_ char *under = xstrdup(name), *rel = NULL, *meta = NULL;

        for (char *s = under; *s; s++)
                if (*s == '-')
                        *s = '_';
        rel = xasprintf("%s/%s-%s.dist-info/METADATA", dir, under, version);
        meta = xasprintf("Metadata-Version: 2.4\nName: %s\nVersion: %s\nSummary: test\n\nlong text\n",
                         name, version);
        fx_write(root, rel, meta);
        free(rel);
        rel = xasprintf("%s/%s-%s.dist-info/INSTALLER", dir, under, version);
        fx_write(root, rel, "pip\n");
}

void fx_spack_spec(const char *root, const char *prefix, const char *name, const char *version,
                   const char *cuda)
{
        _cleanup_free_ char *rel = path_join(prefix, ".spack/spec.json");
        _cleanup_free_ char *text = xasprintf(
                "{\"spec\": {\"_meta\": {\"version\": 4}, \"nodes\": [\n"
                " {\"name\": \"%s\", \"version\": \"%s\", \"parameters\": {\"cuda\": true},\n"
                "  \"dependencies\": [{\"name\": \"cuda\", \"hash\": \"ffjxl7u7gsm5hgvzkmmm2rj3lavwhvja\", "
                "\"parameters\": {\"deptypes\": [\"build\", \"link\"], \"virtuals\": []}}],\n"
                "  \"hash\": \"k7qz3xvqmmb2fvmpyl4ld6hmxx3kbfzz\"},\n"
                " {\"name\": \"cuda\", \"version\": \"%s\", \"hash\": \"ffjxl7u7gsm5hgvzkmmm2rj3lavwhvja\"}]}}\n",
                name, version, cuda);

        fx_write(root, rel, text);
}

/* RECORD's hash: sha256=, then the digest in urlsafe base64 unpadded. */
static void record_hash(const char *path, struct strbuf *ret)
{
        static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        struct strbuf data = STRBUF_INIT;
        unsigned char d[33] = { 0 };
        char hex[65];

        ck_assert_int_ge(file_read_regular_at(AT_FDCWD, path, NULL, (size_t)64 << 20, false, &data, NULL), 0);
        sha256_hex(data.buf, data.len, hex);
        for (size_t i = 0; i < 32; i++)
                ck_assert_int_eq(sscanf(hex + 2 * i, "%2hhx", &d[i]), 1);
        strbuf_addstr(ret, "sha256=");
        for (size_t i = 0; i < 32; i += 3) {
                unsigned v = (unsigned)d[i] << 16 | (unsigned)d[i + 1] << 8 | d[i + 2];

                strbuf_addch(ret, b64[v >> 18 & 63]);
                strbuf_addch(ret, b64[v >> 12 & 63]);
                strbuf_addch(ret, b64[v >> 6 & 63]);
                if (i + 2 < 32)
                        strbuf_addch(ret, b64[v & 63]);
        }
        strbuf_release(&data);
}

void fx_wheel_record(const char *root, const char *site, const char *name, const char *version,
                     const char *const *files)
{
        _cleanup_free_ char *under = xstrdup(name), *di = NULL, *rel = NULL;
        struct strbuf sb = STRBUF_INIT;

        fx_dist_info(root, site, name, version);
        for (char *s = under; *s; s++)
                if (*s == '-')
                        *s = '_';
        di = xasprintf("%s-%s.dist-info", under, version);
        for (const char *const *f = files; *f; f++) {
                _cleanup_free_ char *rf = xasprintf("%s/%s", site, *f);
                _cleanup_free_ char *p = abs_path(root, rf);
                struct stat st;

                ck_assert_int_eq(stat(p, &st), 0);
                strbuf_addf(&sb, "%s,", *f);
                record_hash(p, &sb);
                strbuf_addf(&sb, ",%lld\n", (long long)st.st_size);
        }
        for (const char *own = "INSTALLER\0METADATA\0"; *own; own += strlen(own) + 1) {
                _cleanup_free_ char *rf = xasprintf("%s/%s/%s", site, di, own);
                _cleanup_free_ char *p = abs_path(root, rf);
                struct stat st;

                ck_assert_int_eq(stat(p, &st), 0);
                strbuf_addf(&sb, "%s/%s,", di, own);
                record_hash(p, &sb);
                strbuf_addf(&sb, ",%lld\n", (long long)st.st_size);
        }
        strbuf_addf(&sb, "%s/RECORD,,\n", di);
        rel = xasprintf("%s/%s/RECORD", site, di);
        fx_write(root, rel, sb.buf);
        strbuf_release(&sb);
}

void fx_fake_library(const char *root, const char *rel, const char *var)
{
        _cleanup_free_ char *env = xasprintf("CUDAMOD_FAKE_%s", var);
        _cleanup_free_ char *dst = path_join(root, rel);
        _cleanup_free_ char *dir = path_dirname(dst);
        const char *src = getenv(env);
        _cleanup_close_ int in = -1, out = -1;
        char buf[65536];
        ssize_t n;

        ck_assert_msg(src != NULL, "%s is not set (run the tests with meson test)", env);
        fx_mkdir("/", dir);
        in = open(src, O_RDONLY | O_CLOEXEC);
        ck_assert_msg(in >= 0, "'%s': %s", src, strerror(errno));
        unlink(dst);
        out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        ck_assert_msg(out >= 0, "'%s': %s", dst, strerror(errno));
        while ((n = read(in, buf, sizeof(buf))) > 0)
                ck_assert_int_eq(write(out, buf, (size_t)n), n);
        ck_assert_int_eq(n, 0);
}

/* The RUNPATH of a torch library: base, then the entries of extra (those
 * not starting with '/' or '$' taken below root). */
static char *torch_runpath(const char *root, const char *base, const char *extra)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_free_ char *copy = extra ? xstrdup(extra) : NULL;
        char *entry = copy, *next;

        strbuf_addstr(&sb, base);
        for (; entry; entry = next) {
                next = strchr(entry, ':');
                if (next)
                        *next++ = '\0';
                if (!*entry)
                        continue;
                strbuf_addch(&sb, ':');
                if (entry[0] == '/' || entry[0] == '$') {
                        strbuf_addstr(&sb, entry);
                } else {
                        _cleanup_free_ char *p = path_join(root, entry);
                        strbuf_addstr(&sb, p);
                }
        }
        return strbuf_detach(&sb);
}

/* One library of torch/lib: soname = file name. */
static void torch_lib(const char *root, const char *libdir, const char *name, const char *const *needed,
                      const char *runpath, bool rpath)
{
        _cleanup_free_ char *rel = path_join(libdir, name);

        fx_elf(root, rel, &(struct elfstub){ .soname = name, .needed = needed, .runpath = runpath,
                                             .use_rpath = rpath });
}

void fx_torch(const char *root, const char *dir, const struct fx_torch *t)
{
        /* .ci/manywheel/build_cuda.sh's CUDA_RPATHS (CUDA 12). */
        static const char wheel_rpaths[] =
                "$ORIGIN/../../nvidia/cublas/lib:$ORIGIN/../../nvidia/cuda_cupti/lib:"
                "$ORIGIN/../../nvidia/cuda_nvrtc/lib:$ORIGIN/../../nvidia/cuda_runtime/lib:"
                "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cufft/lib:"
                "$ORIGIN/../../nvidia/curand/lib:$ORIGIN/../../nvidia/cusolver/lib:"
                "$ORIGIN/../../nvidia/cusparse/lib:$ORIGIN/../../cusparselt/lib:"
                "$ORIGIN/../../nvidia/nccl/lib:$ORIGIN/../../nvidia/nvtx/lib";
        unsigned major = t->cuda_major ? t->cuda_major : t->cuda ? (unsigned)major_of(t->cuda) : 12;
        _cleanup_free_ char *libdir = path_join(dir, "lib"), *p = NULL;
        _cleanup_free_ char *cudart = xasprintf("libcudart.so.%u", major);
        _cleanup_free_ char *cublas = xasprintf("libcublas.so.%u", major);
        _cleanup_free_ char *cublaslt = xasprintf("libcublasLt.so.%u", major);
        _cleanup_free_ char *cusparse = xasprintf("libcusparse.so.%u", major >= 13 ? 12 : major);
        _cleanup_free_ char *cudnn = xasprintf("libcudnn.so.%u", t->cudnn_major);
        _cleanup_free_ char *lib_base = NULL, *c_base = NULL, *lib_path = NULL, *c_path = NULL;
        const char *cuda_needed[24];
        size_t n = 0;

        if (t->wheel_rpath) {
                lib_base = xasprintf("%s:$ORIGIN", wheel_rpaths);
                c_base = xasprintf("%s:$ORIGIN:$ORIGIN/lib", wheel_rpaths);
        } else {
                lib_base = xstrdup("$ORIGIN");
                c_base = xstrdup("$ORIGIN/lib");
        }
        lib_path = torch_runpath(root, lib_base, t->runpath);
        c_path = torch_runpath(root, c_base, t->runpath);

        cuda_needed[n++] = "libc10.so";
        cuda_needed[n++] = "libc10_cuda.so";
        cuda_needed[n++] = "libtorch_cpu.so";
        cuda_needed[n++] = cudart;
        cuda_needed[n++] = cublas;
        cuda_needed[n++] = cublaslt;
        if (t->cusparse)
                cuda_needed[n++] = cusparse;
        if (t->cudnn_major)
                cuda_needed[n++] = cudnn;
        if (t->nccl)
                cuda_needed[n++] = "libnccl.so.2";
        if (t->cusparselt)
                cuda_needed[n++] = "libcusparseLt.so.0";
        if (t->nvshmem)
                cuda_needed[n++] = "libnvshmem_host.so.3";
        if (t->magma)
                cuda_needed[n++] = "libmagma.so";
        for (const char *const *x = t->extra_needed; x && *x; x++) {
                ck_assert_uint_lt(n, ELEMENTSOF(cuda_needed) - 2);
                cuda_needed[n++] = *x;
        }

        cuda_needed[n++] = "libcuda.so.1";
        cuda_needed[n] = NULL;

        torch_lib(root, libdir, "libc10.so", NULL, lib_path, t->wheel_rpath);
        torch_lib(root, libdir, "libc10_cuda.so", (const char *const[]){ "libc10.so", cudart, NULL },
                  lib_path, t->wheel_rpath);
        torch_lib(root, libdir, "libtorch_cpu.so", (const char *const[]){ "libc10.so", NULL }, lib_path,
                  t->wheel_rpath);
        torch_lib(root, libdir, "libtorch_cuda.so", cuda_needed, lib_path, t->wheel_rpath);
        torch_lib(root, libdir, "libtorch.so",
                  (const char *const[]){ "libtorch_cpu.so", "libtorch_cuda.so", NULL }, lib_path,
                  t->wheel_rpath);
        torch_lib(root, libdir, "libtorch_global_deps.so", (const char *const[]){ cudart, cublas, NULL },
                  lib_path, t->wheel_rpath);
        /* A Python extension has no soname. */
        fx_elf(root, p = path_join(dir, "_C.cpython-312-x86_64-linux-gnu.so"),
               &(struct elfstub){ .needed = (const char *const[]){ "libtorch.so", NULL }, .runpath = c_path,
                                  .use_rpath = t->wheel_rpath });
        free(TAKE_PTR(p));

        fx_write(root, p = path_join(dir, "__init__.py"),
                 "# fake torch (cudamod test fixture)\n"
                 "from torch.version import __version__ as __version__\n");
        free(TAKE_PTR(p));
        if (!t->no_version_py) {
                _cleanup_free_ char *cuda = t->cuda ? xasprintf("'%s'", t->cuda) : xstrdup("None");
                _cleanup_free_ char *py = xasprintf(
                        "from typing import Optional\n\n"
                        "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
                        "__version__ = '%s'\n"
                        "debug = False\n"
                        "cuda: Optional[str] = %s\n"
                        "git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\n"
                        "hip: Optional[str] = None\n",
                        t->version ? t->version : "2.5.1", cuda);
                fx_write(root, p = path_join(dir, "version.py"), py);
        }
}

void fx_debian_torch(const char *root, bool sys_runpath)
{
        static const struct {
                const char *name;             /* libX */
                const char *const needed[10];
                bool in_torch_lib;
        } libs[] = {
                { "libc10", { NULL }, true },
                { "libc10_cuda", { "libc10.so.2.6", "libcudart.so.12", NULL }, true },
                { "libcaffe2_nvrtc", { "libcuda.so.1", NULL }, true },
                { "libshm", { "libtorch_cpu.so.2.6", "libc10.so.2.6", NULL }, true },
                { "libtorch", { "libtorch_cpu.so.2.6", "libtorch_cuda.so.2.6", NULL }, true },
                { "libtorch_cpu", { "libc10.so.2.6", NULL }, true },
                { "libtorch_cuda",
                  { "libc10_cuda.so.2.6", "libcudart.so.12", "libcusparse.so.12", "libnccl.so.2", "libcublas.so.12",
                    "libcublasLt.so.12", "libcudnn.so.9", "libc10.so.2.6", "libtorch_cpu.so.2.6", NULL },
                  false },
                { "libtorch_cuda_linalg",
                  { "libtorch_cpu.so.2.6", "libtorch_cuda.so.2.6", "libc10_cuda.so.2.6", "libcudart.so.12",
                    "libc10.so.2.6", NULL },
                  true },
                { "libtorch_global_deps", { "libcudart.so.12", NULL }, true },
                { "libtorch_python",
                  { "libtorch.so.2.6", "libshm.so.2.6", "libtorch_cpu.so.2.6", "libtorch_cuda.so.2.6",
                    "libc10_cuda.so.2.6", "libcudart.so.12", "libc10.so.2.6", "libcudnn.so.9", NULL },
                  true },
        };
        _cleanup_free_ char *sys = path_join(root, FX_DEBIAN_SYS);
        _cleanup_free_ char *c_runpath = sys_runpath ? xasprintf("$ORIGIN/lib:%s", sys) : xstrdup("$ORIGIN/lib");
        _cleanup_free_ char *p = NULL;

        for (size_t i = 0; i < ELEMENTSOF(libs); i++) {
                _cleanup_free_ char *soname = xasprintf("%s.so.2.6", libs[i].name);
                _cleanup_free_ char *file = xasprintf("%s/%s.0", FX_DEBIAN_SYS, soname);
                _cleanup_free_ char *link = path_join(FX_DEBIAN_SYS, soname);
                _cleanup_free_ char *target = xasprintf("%s.0", soname);

                fx_elf(root, file,
                       &(struct elfstub){ .soname = soname, .needed = libs[i].needed,
                                          .runpath = sys_runpath ? sys : NULL });
                fx_symlink(root, link, target);
                if (libs[i].in_torch_lib) {
                        _cleanup_free_ char *rel = xasprintf("%s/lib/%s.so", FX_DEBIAN_TORCH, libs[i].name);
                        _cleanup_free_ char *to = xasprintf("../../../../x86_64-linux-gnu/%s", soname);

                        fx_symlink(root, rel, to);
                }
        }
        fx_elf(root, p = path_join(FX_DEBIAN_TORCH, "_C.cpython-313-x86_64-linux-gnu.so"),
               &(struct elfstub){ .needed = (const char *const[]){ "libtorch_python.so.2.6", NULL },
                                  .runpath = c_runpath });
        free(TAKE_PTR(p));
        fx_write(root, p = path_join(FX_DEBIAN_TORCH, "__init__.py"),
                 "# fake Debian torch (cudamod test fixture)\n"
                 "from torch.version import __version__ as __version__\n");
        free(TAKE_PTR(p));
        fx_write(root, p = path_join(FX_DEBIAN_TORCH, "version.py"),
                 "from typing import Optional\n\n"
                 "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
                 "__version__ = '2.6.0+debian'\n"
                 "debug = False\n"
                 "cuda: Optional[str] = '12.4'\n"
                 "git_version = 'Unknown'\n"
                 "hip: Optional[str] = None\n"
                 "xpu: Optional[str] = None\n");
}

static void put_le(struct strbuf *sb, size_t off, uint64_t v, size_t n)
{
        while (sb->len < off + n)
                strbuf_addch(sb, '\0');
        for (size_t i = 0; i < n; i++)
                sb->buf[off + i] = i < 8 ? (char)(v >> (8 * i)) : 0; /* n may be past v's 8 bytes */
}

void fx_ldcache(const char *root, const char *rel, const char *sys)
{
        _cleanup_free_ char *dir = path_join(root, sys), *p = abs_path(root, rel);
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT, str = STRBUF_INIT;
        struct strv names = { 0 }, keys = { 0 };
        size_t strings;
        FILE *f;

        ck_assert_int_ge(dir_list(AT_FDCWD, dir, &names), 0);
        strv_sort_uniq(&names);
        /* ldconfig keys by soname; every lib*.so.* name is a key here (an
         * extra key for a real file name changes no lookup). */
        for (size_t i = 0; i < names.len; i++)
                if (startswith(names.items[i], "lib") && strstr(names.items[i], ".so."))
                        strv_add(&keys, names.items[i]);
        /* Header (48 bytes), then the entries (24 bytes each), then the
         * strings; offsets count from the header's start. */
        strings = 48 + 24 * keys.len;
        for (size_t i = 0; i < keys.len; i++) {
                _cleanup_free_ char *value = path_join(dir, keys.items[i]);
                size_t k = strings + str.len, v, e = 48 + 24 * i;

                strbuf_add(&str, keys.items[i], strlen(keys.items[i]) + 1);
                v = strings + str.len;
                strbuf_add(&str, value, strlen(value) + 1);
                put_le(&sb, e, 0x0303, 4); /* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 */
                put_le(&sb, e + 4, k, 4);
                put_le(&sb, e + 8, v, 4);
                put_le(&sb, e + 16, 0, 8);
        }
        put_le(&sb, 0, 0, 48);
        memcpy(sb.buf, "glibc-ld.so.cache1.1", 20);
        put_le(&sb, 20, keys.len, 4);
        put_le(&sb, 24, str.len, 4);
        sb.buf[28] = 2; /* little endian */
        strbuf_add(&sb, str.buf, str.len);
        mkparent(root, rel);
        f = fopen(p, "we");
        ck_assert_msg(f != NULL, "fopen '%s': %s", p, strerror(errno));
        ck_assert_int_eq(fwrite(sb.buf, 1, sb.len, f), sb.len);
        ck_assert_int_eq(fclose(f), 0);
        strv_release(&names);
        strv_release(&keys);
}

void fx_many_files(const char *dir, size_t first, size_t n)
{
        _cleanup_free_ char *src = NULL;

        for (size_t i = first; i < first + n; i++) {
                _cleanup_free_ char *p = xasprintf("%s/f%07zu", dir, i);

                if (!src || (i - first) % 60000 == 0) {
                        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

                        ck_assert_msg(fd >= 0, "create '%s': %s", p, strerror(errno));
                        close(fd);
                        free(src);
                        src = xstrdup(p);
                } else
                        ck_assert_msg(link(src, p) == 0, "link '%s': %s", p, strerror(errno));
        }
}
