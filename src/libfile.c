/* libfile.c: what shared library files tell (libfile.h). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "detect.h"
#include "component.h"
#include "libfile.h"
#include "banned.h"

struct version lib_file_version(const char *path, const char *stem)
{
        _cleanup_free_ char *real = realpath(path, NULL);
        struct version v = { .count = 0 };

        /* libnvJitLink.so.12 as the real file (wheels) tells only the major. */
        if (!real || soname_version_parse(path_basename(real), stem, &v) < 0 || v.count < 2)
                v.count = 0;
        return v;
}

char *lib_version_string(const struct version *v)
{
        return v->count ? version_to_string(v, 0) : xstrdup("unknown");
}

char *real_dirname(const char *path)
{
        _cleanup_free_ char *real = realpath(path, NULL);

        return real ? path_dirname(real) : NULL;
}

bool same_real_dir(const char *a_path, const char *b_path)
{
        _cleanup_free_ char *a = real_dirname(a_path), *b = real_dirname(b_path);

        return a && b && streq(a, b);
}

char *soname_stem(const char *soname)
{
        const char *so = strstr(soname, ".so");

        return xstrndup(soname, so ? (size_t)(so - soname) : strlen(soname));
}

char *soname_advice_of(const struct component *c, const char *soname)
{
        _cleanup_free_ char *stem = soname_stem(soname);
        struct version v;

        if (c && soname_version_parse(soname, stem, &v) >= 0)
                return xasprintf("load a %s/%lu.x module", c->name, v.n[0]);
        return xstrdup("install it or load the module that provides it");
}

unsigned long lib_cuda_major_named_by(const char *path, const struct elf_info *info)
{
        static const char *const stems[] = { "libcublasLt", "libcublas", "libnvrtc" };
        unsigned long major = 0;

        for (size_t i = 0; i < info->needed.len && !major; i++)
                for (size_t k = 0; k < ELEMENTSOF(stems) && !major; k++) {
                        struct version v;
                        if (soname_version_parse(info->needed.items[i], stems[k], &v) >= 0 && v.count == 1)
                                major = v.n[0];
                }
        for (size_t k = 0; k < ELEMENTSOF(stems) && !major; k++) {
                _cleanup_free_ char *prefix = xasprintf("%s.so.", stems[k]);
                struct strv found = { 0 };

                if (elf_find_strings(AT_FDCWD, path, prefix, &found, NULL) >= 0)
                        for (size_t i = 0; i < found.len && !major; i++) {
                                struct version v;
                                /* "libnvrtc.so.%d" is a format, not a major. */
                                if (version_parse(found.items[i] + strlen(prefix), &v) >= 0)
                                        major = v.n[0];
                        }
                strv_release(&found);
        }
        return major;
}

unsigned long lib_nccl_cuda_major(const char *path, const struct elf_info *info,
                                  struct version *ret_nccl)
{
        struct strv found = { 0 };
        unsigned long major = 0;

        if (elf_find_strings(AT_FDCWD, path, "NCCL version ", &found, NULL) >= 0)
                for (size_t i = 0; i < found.len && !major; i++) {
                        struct version nccl, cuda;

                        if (nccl_version_string_parse(found.items[i], &nccl, &cuda) >= 0 && cuda.count) {
                                major = cuda.n[0];
                                if (ret_nccl)
                                        *ret_nccl = nccl;
                        }
                }
        strv_release(&found);
        for (size_t i = 0; i < info->needed.len && !major; i++) {
                struct version v;
                if (soname_version_parse(info->needed.items[i], "libcudart", &v) >= 0 && v.count == 1)
                        major = v.n[0];
        }
        return major;
}

struct version libdir_toolkit_version(const char *dir)
{
        static const char *const stems[] = { "libnvJitLink", "libcudart", "libnvrtc" };
        struct version found = { .count = 0 };
        struct strv names = { 0 };

        if (dir_list(AT_FDCWD, dir, &names) < 0)
                return found;
        for (size_t k = 0; k < ELEMENTSOF(stems) && !found.count; k++)
                for (size_t i = 0; i < names.len && !found.count; i++) {
                        struct version v;
                        if (soname_version_parse(names.items[i], stems[k], &v) >= 0 && v.count >= 2)
                                found = version_truncate(&v, 2);
                }
        strv_release(&names);
        return found;
}

char *find_soname_file(const struct strv *dirs, const char *stem, unsigned long *ret_major)
{
        for (size_t i = 0; i < dirs->len; i++) {
                struct strv names = { 0 };
                char *found = NULL;

                if (dir_list(AT_FDCWD, dirs->items[i], &names) < 0)
                        continue;
                for (size_t k = 0; k < names.len && !found; k++) {
                        struct version v;

                        if (soname_version_parse(names.items[k], stem, &v) >= 0 && v.count == 1) {
                                found = path_join(dirs->items[i], names.items[k]);
                                *ret_major = v.n[0];
                        }
                }
                strv_release(&names);
                if (found)
                        return found;
        }
        return NULL;
}

unsigned long soname_file_cuda_major(const struct strv *dirs, const char *stem,
                                     unsigned long (*major_of)(const char *path, const struct elf_info *info))
{
        unsigned long lib_major = 0, major = 0;
        _cleanup_free_ char *path = find_soname_file(dirs, stem, &lib_major);
        struct elf_info info = { 0 };

        if (path && elf_read_info(AT_FDCWD, path, &info, NULL) >= 0)
                major = major_of(path, &info);
        elf_info_release(&info);
        return major;
}

void strbuf_add_list(struct strbuf *sb, const struct strv *v, size_t show)
{
        for (size_t i = 0; i < v->len && i < show; i++)
                strbuf_addf(sb, "%s%s", i == 0 ? "" : i + 1 == v->len ? " and " : ", ", v->items[i]);
        if (v->len > show)
                strbuf_addf(sb, " and %zu more", v->len - show);
}

static bool libset_has(const struct libset *l, const struct stat *st)
{
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].dev == st->st_dev && l->items[i].ino == st->st_ino)
                        return true;
        return false;
}

int libset_add(struct libset *l, const char *dir, const char *name, struct diag *d)
{
        _cleanup_free_ char *path = dir ? path_join(dir, name) : xstrdup(name);
        struct elf_info info = { 0 };
        struct stat st;
        int r;

        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || libset_has(l, &st))
                return 0;
        r = elf_read_info(AT_FDCWD, path, &info, d);
        if (r == -ENOEXEC) {
                diag_release(d);
                return 0;
        }
        if (r < 0)
                return r;
        if (info.type != ET_DYN) {
                elf_info_release(&info);
                return 0;
        }
        l->items = xreallocarray(l->items, l->n + 1, sizeof(*l->items));
        l->items[l->n++] = (struct libset_entry){
                .path = TAKE_PTR(path),
                .name = xstrdup(info.soname ? info.soname : path_basename(name)),
                .info = info,
                .dev = st.st_dev,
                .ino = st.st_ino,
        };
        return 1;
}

void libset_release(struct libset *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].path);
                free(l->items[i].name);
                elf_info_release(&l->items[i].info);
        }
        free(l->items);
        *l = (struct libset){ 0 };
}
