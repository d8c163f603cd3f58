/* test-resolve.c: loader-path resolution against stub trees, the loader
 * cache (the real /etc/ld.so.cache against `ldconfig -p`, and synthetic
 * ones, whole, truncated and hostile), driver libraries, closure order. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "fixture.h"
#include "resolve.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"
#include "banned.h"

static char *root;

static void setup(void)
{
        root = fx_new();
}

static void teardown(void)
{
        fx_free(root);
        root = NULL;
}

static char *at(const char *rel)
{
        return path_join(root, rel);
}

/* A stub library at rel with this soname (file name's last part) and
 * needs; runpath may be NULL. */
static void lib(const char *rel, const char *const *needed, const char *runpath, bool rpath)
{
        struct elfstub s = {
                .soname = path_basename(rel), .needed = needed, .runpath = runpath, .use_rpath = rpath,
        };

        fx_elf(root, rel, &s);
}

/* Resolve soname for the object at rel (read from disk); returns the source
 * and, in *ret_path (freed by the caller), the path relative to root. */
static enum resolve_source resolve_for(const struct resolve_env *e, const char *rel,
                                       const char *soname, char **ret_path)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *obj = at(rel);
        struct elf_info info = { 0 };
        struct resolved r;
        enum resolve_source src;

        ck_assert_int_eq(elf_read_info(AT_FDCWD, obj, &info, &d), 0);
        ck_assert_int_eq(resolve_needed(e, obj, &info, soname, &r, &d), 0);
        ck_assert_str_eq(r.soname, soname);
        src = r.source;
        if (ret_path)
                *ret_path = r.path && startswith(r.path, root) ? xstrdup(r.path + strlen(root) + 1)
                                                               : r.path ? xstrdup(r.path) : NULL;
        if (src == RESOLVE_NOT_FOUND)
                ck_assert_ptr_null(r.path);
        resolved_release(&r);
        elf_info_release(&info);
        return src;
}

/* An environment whose LD_LIBRARY_PATH is the given dirs below root. */
static void env_dirs(struct resolve_env *e, const char *const *rels)
{
        resolve_env_init(e, NULL, NULL);
        for (; rels && *rels; rels++)
                strv_push(&e->ld_library_path, at(*rels));
}

static void assert_resolves(const struct resolve_env *e, const char *obj, const char *soname,
                            enum resolve_source want, const char *want_rel)
{
        _cleanup_free_ char *p = NULL;

        ck_assert_str_eq(resolve_source_to_string(resolve_for(e, obj, soname, &p)),
                         resolve_source_to_string(want));
        if (want_rel)
                ck_assert_str_eq(p, want_rel);
}

START_TEST(resolve_rpath_beats_ld_library_path)
{
        struct resolve_env e;

        lib("app/libapp.so.1", (const char *const[]){ "libfoo.so.1", NULL }, "$ORIGIN/rp", true);
        lib("app/rp/libfoo.so.1", NULL, NULL, false);
        lib("llp/libfoo.so.1", NULL, NULL, false);
        env_dirs(&e, (const char *const[]){ "llp", NULL });
        assert_resolves(&e, "app/libapp.so.1", "libfoo.so.1", RESOLVE_RPATH, "app/rp/libfoo.so.1");
        resolve_env_release(&e);
}
END_TEST

START_TEST(resolve_ld_library_path_beats_runpath)
{
        struct resolve_env e;

        lib("app/libapp.so.1", (const char *const[]){ "libfoo.so.1", NULL }, "$ORIGIN/rp", false);
        lib("app/rp/libfoo.so.1", NULL, NULL, false);
        lib("llp/libfoo.so.1", NULL, NULL, false);
        env_dirs(&e, (const char *const[]){ "empty", "llp", NULL });
        assert_resolves(&e, "app/libapp.so.1", "libfoo.so.1", RESOLVE_LD_LIBRARY_PATH, "llp/libfoo.so.1");
        resolve_env_release(&e);
        /* Without it, RUNPATH. */
        env_dirs(&e, NULL);
        assert_resolves(&e, "app/libapp.so.1", "libfoo.so.1", RESOLVE_RUNPATH, "app/rp/libfoo.so.1");
        resolve_env_release(&e);
}
END_TEST

START_TEST(resolve_runpath_disables_rpath)
{
        _cleanup_free_ char *obj = at("app/libapp.so.1"), *rp = at("rp"), *run = at("run");
        struct elf_info info = { .elf_class = 64, .machine = 62, .little_endian = true, .type = 3 };
        struct resolve_env e;
        struct resolved r;

        lib("app/libapp.so.1", NULL, NULL, false);
        lib("rp/libfoo.so.1", NULL, NULL, false);
        lib("run/libfoo.so.1", NULL, NULL, false);
        info.rpath = rp;
        info.runpath = run;
        resolve_env_init(&e, NULL, NULL);
        ck_assert_int_eq(resolve_needed(&e, obj, &info, "libfoo.so.1", &r, NULL), 0);
        ck_assert_int_eq(r.source, RESOLVE_RUNPATH);
        ck_assert_str_eq(r.searched_entry, run);
        resolved_release(&r);
        info.runpath = NULL;
        ck_assert_int_eq(resolve_needed(&e, obj, &info, "libfoo.so.1", &r, NULL), 0);
        ck_assert_int_eq(r.source, RESOLVE_RPATH);
        ck_assert_str_eq(r.searched_entry, rp);
        resolved_release(&r);
        resolve_env_release(&e);
}
END_TEST

/* The path is reported as found, not canonicalised. */
static const struct {
        const char *runpath;
        const char *file;
        const char *found;
} origin_cases[] = {
        { "$ORIGIN", "a/b/libfoo.so.1", "a/b/libfoo.so.1" },
        { "${ORIGIN}/../c", "a/c/libfoo.so.1", "a/b/../c/libfoo.so.1" },
        { "/nonexistent:$ORIGIN/$LIB", "a/b/lib64/libfoo.so.1", "a/b/lib64/libfoo.so.1" },
        { "$ORIGIN/${PLATFORM}", "a/b/x86_64/libfoo.so.1", "a/b/x86_64/libfoo.so.1" },
        { "$ORIGINAL:$ORIGIN/../c", "a/c/libfoo.so.1", "a/b/../c/libfoo.so.1" },
        { NULL, NULL, NULL },
};

START_TEST(resolve_expands_origin_lib_platform)
{
        for (size_t i = 0; origin_cases[i].runpath; i++) {
                struct resolve_env e;

                lib("a/b/libapp.so.1", (const char *const[]){ "libfoo.so.1", NULL }, origin_cases[i].runpath, false);
                lib(origin_cases[i].file, NULL, NULL, false);
                env_dirs(&e, NULL);
                assert_resolves(&e, "a/b/libapp.so.1", "libfoo.so.1", RESOLVE_RUNPATH, origin_cases[i].found);
                resolve_env_release(&e);
                {
                        _cleanup_free_ char *found = at(origin_cases[i].file);
                        ck_assert_int_eq(unlink(found), 0);
                }
        }
}
END_TEST

START_TEST(resolve_skips_wrong_class_and_machine)
{
        struct elfstub s32 = { .elf32 = true, .soname = "libfoo.so.1" };
        struct elfstub arm = { .machine = ELFSTUB_AARCH64, .soname = "libfoo.so.1" };
        struct resolve_env e;

        lib("app/libapp.so.1", NULL, NULL, false);
        fx_elf(root, "d32/libfoo.so.1", &s32);
        fx_elf(root, "darm/libfoo.so.1", &arm);
        fx_write(root, "dtext/libfoo.so.1", "INPUT(libfoo.so.1.0)\n");
        lib("dok/libfoo.so.1", NULL, NULL, false);
        env_dirs(&e, (const char *const[]){ "d32", "darm", "dtext", "dok", NULL });
        assert_resolves(&e, "app/libapp.so.1", "libfoo.so.1", RESOLVE_LD_LIBRARY_PATH, "dok/libfoo.so.1");
        resolve_env_release(&e);
        /* And the 32-bit object takes the 32-bit one. */
        fx_elf(root, "app32/libapp.so.1", &(struct elfstub){ .elf32 = true, .soname = "libapp.so.1" });
        env_dirs(&e, (const char *const[]){ "darm", "dok", "d32", NULL });
        assert_resolves(&e, "app32/libapp.so.1", "libfoo.so.1", RESOLVE_LD_LIBRARY_PATH, "d32/libfoo.so.1");
        resolve_env_release(&e);
}
END_TEST

START_TEST(resolve_soname_with_slash_is_a_path)
{
        _cleanup_free_ char *abs = at("x/libfoo.so.1"), *missing = at("x/libnone.so.1");
        struct resolve_env e;

        lib("app/libapp.so.1", NULL, NULL, false);
        lib("x/libfoo.so.1", NULL, NULL, false);
        lib("llp/libnone.so.1", NULL, NULL, false);
        env_dirs(&e, (const char *const[]){ "llp", NULL });
        assert_resolves(&e, "app/libapp.so.1", abs, RESOLVE_PATH, "x/libfoo.so.1");
        /* Not searched: the file of that name in LD_LIBRARY_PATH is no match. */
        assert_resolves(&e, "app/libapp.so.1", missing, RESOLVE_NOT_FOUND, NULL);
        resolve_env_release(&e);
}
END_TEST

START_TEST(resolve_not_found)
{
        struct resolve_env e;
        _cleanup_free_ char *p = NULL;

        lib("app/libapp.so.1", NULL, "$ORIGIN", false);
        env_dirs(&e, (const char *const[]){ "app", NULL });
        ck_assert_int_eq(resolve_for(&e, "app/libapp.so.1", "libcudamod-nonexistent.so.7", &p),
                         RESOLVE_NOT_FOUND);
        ck_assert_ptr_null(p);
        resolve_env_release(&e);
}
END_TEST

START_TEST(resolve_empty_entry_is_working_directory)
{
        _cleanup_free_ char *cwd = getcwd(NULL, 0), *dir = at("here");
        struct resolve_env e;
        _cleanup_free_ char *p = NULL;

        lib("app/libapp.so.1", NULL, NULL, false);
        lib("here/libfoo.so.1", NULL, NULL, false);
        ck_assert_int_eq(chdir(dir), 0);
        resolve_env_init(&e, "/nonexistent::/also-not", NULL);
        ck_assert_int_eq(resolve_for(&e, "app/libapp.so.1", "libfoo.so.1", &p), RESOLVE_LD_LIBRARY_PATH);
        ck_assert_str_eq(p, "./libfoo.so.1");
        resolve_env_release(&e);
        ck_assert_int_eq(chdir(cwd), 0);
}
END_TEST

START_TEST(resolve_env_splits_like_ld_so)
{
        struct resolve_env e;

        resolve_env_init(&e, "/a:/b;/c::", NULL);
        ck_assert_uint_eq(e.ld_library_path.len, 5);
        ck_assert_str_eq(e.ld_library_path.items[0], "/a");
        ck_assert_str_eq(e.ld_library_path.items[1], "/b");
        ck_assert_str_eq(e.ld_library_path.items[2], "/c");
        ck_assert_str_eq(e.ld_library_path.items[3], "");
        ck_assert_str_eq(e.ld_library_path.items[4], "");
        resolve_env_release(&e);
        resolve_env_init(&e, "", NULL);
        ck_assert_uint_eq(e.ld_library_path.len, 0);
        resolve_env_release(&e);
        resolve_env_init(&e, NULL, NULL);
        ck_assert_uint_eq(e.ld_library_path.len, 0);
        resolve_env_release(&e);
}
END_TEST

START_TEST(resolve_source_names)
{
        ck_assert_str_eq(resolve_source_to_string(RESOLVE_NOT_FOUND), "not found");
        ck_assert_str_eq(resolve_source_to_string(RESOLVE_RPATH), "rpath");
        ck_assert_str_eq(resolve_source_to_string(RESOLVE_LD_LIBRARY_PATH), "LD_LIBRARY_PATH");
        ck_assert_str_eq(resolve_source_to_string(RESOLVE_RUNPATH), "runpath");
        ck_assert_str_eq(resolve_source_to_string(RESOLVE_LDCACHE), "ld.so.cache");
        ck_assert_str_eq(resolve_source_to_string(RESOLVE_DEFAULT_DIR), "default");
        ck_assert_str_eq(resolve_source_to_string(RESOLVE_PATH), "path");
        ck_assert_ptr_null(resolve_source_to_string(_RESOLVE_SOURCE_MAX));
}
END_TEST

/* --- closure ------------------------------------------------------------ */

START_TEST(resolve_object_follows_needed_order)
{
        struct resolve_list l;
        struct elf_info info;
        struct resolve_env e;
        _cleanup_free_ char *obj = at("a/libA.so.1");

        lib("a/libA.so.1", (const char *const[]){ "libC.so.1", "libmissing.so.1", "libB.so.1", NULL }, "$ORIGIN", false);
        lib("a/libB.so.1", NULL, NULL, false);
        lib("a/libC.so.1", NULL, NULL, false);
        env_dirs(&e, NULL);
        ck_assert_int_eq(resolve_object(&e, obj, &info, &l, NULL), 0);
        ck_assert_str_eq(info.soname, "libA.so.1");
        ck_assert_uint_eq(l.n, 3);
        ck_assert_str_eq(l.items[0].soname, "libC.so.1");
        ck_assert_int_eq(l.items[0].source, RESOLVE_RUNPATH);
        ck_assert_str_eq(l.items[1].soname, "libmissing.so.1");
        ck_assert_int_eq(l.items[1].source, RESOLVE_NOT_FOUND);
        ck_assert_str_eq(l.items[2].soname, "libB.so.1");
        resolve_list_release(&l);
        elf_info_release(&info);
        resolve_env_release(&e);
}
END_TEST

START_TEST(resolve_closure_is_breadth_first_each_soname_once)
{
        _cleanup_free_ char *obj = at("a/libA.so.1");
        static const char *const want[] = { "libB.so.1", "libC.so.1", "libD.so.1", "libE.so.1", NULL };
        struct resolve_list l;
        struct resolve_env e;
        size_t i;

        lib("a/libA.so.1", (const char *const[]){ "libB.so.1", "libC.so.1", NULL }, "$ORIGIN", false);
        /* B finds D only through its own RUNPATH; D needs A back. */
        lib("a/libB.so.1", (const char *const[]){ "libD.so.1", "libC.so.1", NULL }, "$ORIGIN/sub", false);
        lib("a/libC.so.1", (const char *const[]){ "libE.so.1", NULL }, NULL, false);
        lib("a/sub/libD.so.1", (const char *const[]){ "libA.so.1", NULL }, NULL, false);
        env_dirs(&e, NULL);
        ck_assert_int_eq(resolve_closure(&e, obj, &l, NULL), 0);
        for (i = 0; want[i]; i++) {
                ck_assert_uint_lt(i, l.n);
                ck_assert_str_eq(l.items[i].soname, want[i]);
        }
        ck_assert_uint_eq(l.n, i);
        ck_assert_int_eq(l.items[2].source, RESOLVE_RUNPATH);
        ck_assert_ptr_nonnull(strstr(l.items[2].path, "/a/sub/libD.so.1"));
        /* C has no RUNPATH and E is nowhere. */
        ck_assert_int_eq(l.items[3].source, RESOLVE_NOT_FOUND);
        resolve_list_release(&l);
        resolve_env_release(&e);
}
END_TEST

START_TEST(resolve_closure_of_missing_file_is_error)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *obj = at("nothere.so");
        struct resolve_list l = { 0 };
        struct resolve_env e;

        env_dirs(&e, NULL);
        ck_assert_int_eq(resolve_closure(&e, obj, &l, &d), -ENOENT);
        ck_assert_ptr_nonnull(strstr(d.message, "nothere.so"));
        ck_assert_uint_eq(l.n, 0);
        resolve_env_release(&e);
}
END_TEST

static const struct {
        const char *soname;
        bool driver;
} driver_cases[] = {
        { "libcuda.so.1", true },
        { "libcuda.so.535.104.05", true },
        { "libnvidia-ml.so.1", true },
        { "libnvidia-ptxjitcompiler.so.1", true },
        { "libnvcuvid.so.1", true },
        { "libcudart.so.12", false },
        { "libcuda.so", false },
        { "libcudadevrt.a", false },
        { "libnvidia-ml.so", false },
        { "libnvrtc.so.12", false },
        { "libnvJitLink.so.12", false },
        { "", false },
        { NULL, false },
};

START_TEST(resolve_driver_libraries)
{
        for (size_t i = 0; driver_cases[i].soname; i++)
                ck_assert_msg(resolve_is_driver_library(driver_cases[i].soname) == driver_cases[i].driver,
                              "%s", driver_cases[i].soname);
}
END_TEST

/* --- the loader cache --------------------------------------------------- */

struct cache_entry {
        uint32_t flags;
        const char *key, *value;
        uint64_t hwcap;
};

static const struct cache_entry synthetic[] = {
        { 0x0303, "libfoo.so.1", "/hw/libfoo.so.1", 1ull << 62 },
        { 0x0303, "libfoo.so.1", "/x86_64/libfoo.so.1", 0 },
        { 0x0003, "libfoo.so.1", "/i386/libfoo.so.1", 0 },
        { 0x0a03, "libfoo.so.1", "/aarch64/libfoo.so.1", 0 },
        { 0x0303, "libbar.so.2", "/x86_64/libbar.so.2", 0 },
        { 0, NULL, NULL, 0 },
};

static void put(struct strbuf *sb, size_t off, uint64_t v, size_t n, bool big)
{
        while (sb->len < off + n)
                strbuf_addch(sb, '\0');
        for (size_t i = 0; i < n; i++)
                sb->buf[off + (big ? n - 1 - i : i)] = i < 8 ? (char)(v >> (8 * i)) : 0;
}

enum cache_format { CACHE_NEW, CACHE_NEW_BIG, CACHE_OLD_NEW, CACHE_OLD };

/* Write a cache the way ldconfig lays it out (see resolve.c). */
static void build_cache(struct strbuf *sb, enum cache_format fmt, bool extension)
{
        bool big = fmt == CACHE_NEW_BIG, old = fmt == CACHE_OLD_NEW || fmt == CACHE_OLD;
        size_t n = 0, newh = 0, strings, ext, old_end = 0;
        struct strbuf str = STRBUF_INIT;

        while (synthetic[n].key)
                n++;
        if (old) {
                strbuf_add(sb, "ld.so-1.7.0", 11);
                put(sb, 12, n, 4, false);
                old_end = 16 + 12 * n;
                newh = fmt == CACHE_OLD ? old_end : (old_end + 7) & ~(size_t)7;
        }
        strings = fmt == CACHE_OLD ? old_end : newh + 48 + 24 * n;
        for (size_t i = 0; i < n; i++) {
                size_t k = strings + str.len, v;

                strbuf_add(&str, synthetic[i].key, strlen(synthetic[i].key) + 1);
                v = strings + str.len;
                strbuf_add(&str, synthetic[i].value, strlen(synthetic[i].value) + 1);
                if (old) {
                        put(sb, 16 + 12 * i, synthetic[i].flags, 4, false);
                        put(sb, 20 + 12 * i, k - old_end, 4, false);
                        put(sb, 24 + 12 * i, v - old_end, 4, false);
                }
                if (fmt != CACHE_OLD) {
                        size_t e = newh + 48 + 24 * i;
                        put(sb, e, synthetic[i].flags, 4, big);
                        put(sb, e + 4, k - newh, 4, big);
                        put(sb, e + 8, v - newh, 4, big);
                        put(sb, e + 16, synthetic[i].hwcap, 8, big);
                }
        }
        if (fmt != CACHE_OLD) {
                put(sb, newh, 0, 48, false);
                memcpy(sb->buf + newh, "glibc-ld.so.cache1.1", 20);
                put(sb, newh + 20, n, 4, big);
                put(sb, newh + 24, str.len, 4, big);
                sb->buf[newh + 28] = big ? 3 : 2;
        }
        put(sb, strings, 0, 0, false);
        strbuf_add(sb, str.buf, str.len);
        ext = (sb->len + 7) & ~(size_t)7;
        if (extension && fmt != CACHE_OLD) {
                /* One section: a generator string, as ldconfig writes. */
                put(sb, newh + 32, ext - newh, 4, big);
                put(sb, ext, 0xeaa42174u, 4, big);
                put(sb, ext + 4, 1, 4, big);
                put(sb, ext + 8, 0, 4, big);
                put(sb, ext + 12, 0, 4, big);
                put(sb, ext + 16, ext + 24 - newh, 4, big);
                put(sb, ext + 20, 8, 4, big);
                strbuf_add(sb, "ldconfig", 8);
        }
        strbuf_release(&str);
}

static void write_file(const char *rel, const char *buf, size_t len)
{
        _cleanup_free_ char *p = at(rel);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
        ck_assert_int_eq(close(fd), 0);
}

static int load(const char *buf, size_t len, struct ldcache **c, struct diag *d)
{
        _cleanup_free_ char *p = at("ld.so.cache");

        write_file("ld.so.cache", buf, len);
        return ldcache_load(p, c, d);
}

static void assert_synthetic_lookups(const struct ldcache *c, bool has_hwcap)
{
        /* The baseline entry beats a hwcap one (the old format has none). */
        ck_assert_str_eq(ldcache_lookup(c, "libfoo.so.1", 64, 62),
                         has_hwcap ? "/x86_64/libfoo.so.1" : "/hw/libfoo.so.1");
        ck_assert_str_eq(ldcache_lookup(c, "libfoo.so.1", 32, 3), "/i386/libfoo.so.1");
        ck_assert_str_eq(ldcache_lookup(c, "libfoo.so.1", 64, 183), "/aarch64/libfoo.so.1");
        ck_assert_str_eq(ldcache_lookup(c, "libbar.so.2", 64, 62), "/x86_64/libbar.so.2");
        ck_assert_ptr_null(ldcache_lookup(c, "libbar.so.2", 64, 183));
        ck_assert_ptr_null(ldcache_lookup(c, "libbaz.so.1", 64, 62));
        ck_assert_ptr_null(ldcache_lookup(c, "libfoo.so.1", 64, 21));
}

START_TEST(ldcache_synthetic_formats)
{
        static const struct {
                enum cache_format fmt;
                bool extension;
        } cases[] = {
                { CACHE_NEW, false }, { CACHE_NEW, true }, { CACHE_NEW_BIG, true },
                { CACHE_OLD_NEW, false }, { CACHE_OLD_NEW, true }, { CACHE_OLD, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
                _cleanup_diag_ struct diag d = DIAG_INIT;
                struct ldcache *c = NULL;

                build_cache(&sb, cases[i].fmt, cases[i].extension);
                ck_assert_msg(load(sb.buf, sb.len, &c, &d) == 0, "case %zu: %s", i, d.message);
                assert_synthetic_lookups(c, cases[i].fmt != CACHE_OLD);
                ldcache_free(c);
        }
}
END_TEST

START_TEST(ldcache_truncated_is_ebadmsg_at_every_length)
{
        static const enum cache_format fmts[] = { CACHE_NEW, CACHE_NEW_BIG, CACHE_OLD_NEW };

        for (size_t f = 0; f < ELEMENTSOF(fmts); f++) {
                _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

                build_cache(&sb, fmts[f], true);
                for (size_t len = 0; len < sb.len; len++) {
                        _cleanup_diag_ struct diag d = DIAG_INIT;
                        struct ldcache *c = NULL;

                        ck_assert_msg(load(sb.buf, len, &c, &d) == -EBADMSG, "format %zu length %zu", f, len);
                        ck_assert_ptr_null(c);
                        ck_assert_ptr_nonnull(strstr(d.message, "ld.so.cache"));
                }
        }
}
END_TEST

/* Damage a valid new-format cache at offset off (n bytes of v). */
static const struct {
        const char *what;
        size_t off, n;
        uint64_t v;
} damage_cases[] = {
        { "nlibs huge", 20, 4, 0xffffffffu },
        { "len_strings huge", 24, 4, 0xfffffff0u },
        { "byte order invalid", 28, 1, 1 },
        { "extension outside", 32, 4, 0x7ffffff0u },
        { "key offset outside", 48 + 4, 4, 0xffffff00u },
        { "value offset outside", 48 + 8, 4, 0x00100000u },
        { "magic", 0, 1, 'G' },
        { NULL, 0, 0, 0 },
};

START_TEST(ldcache_hostile_is_ebadmsg)
{
        for (size_t i = 0; damage_cases[i].what; i++) {
                _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
                _cleanup_diag_ struct diag d = DIAG_INIT;
                struct ldcache *c = NULL;

                build_cache(&sb, CACHE_NEW, true);
                put(&sb, damage_cases[i].off, damage_cases[i].v, damage_cases[i].n, false);
                ck_assert_msg(load(sb.buf, sb.len, &c, &d) == -EBADMSG, "%s", damage_cases[i].what);
                ck_assert_ptr_nonnull(d.message);
        }
}
END_TEST

START_TEST(ldcache_missing_file_is_empty)
{
        _cleanup_free_ char *p = at("no-such-cache");
        struct ldcache *c = NULL;

        ck_assert_int_eq(ldcache_load(p, &c, NULL), 0);
        ck_assert_ptr_nonnull(c);
        ck_assert_ptr_null(ldcache_lookup(c, "libc.so.6", 64, 62));
        ldcache_free(c);
        ck_assert_ptr_null(ldcache_lookup(NULL, "libc.so.6", 64, 62));
        ldcache_free(NULL);
}
END_TEST

/* The ldconfig to compare with, or NULL. */
static const char *find_ldconfig(void)
{
        static const char *const cands[] = { "/sbin/ldconfig", "/usr/sbin/ldconfig", NULL };

        for (size_t i = 0; cands[i]; i++)
                if (access(cands[i], X_OK) == 0)
                        return cands[i];
        return NULL;
}

/* Every "(libc6,x86-64) =>" line of `ldconfig -p`: the first per soname is
 * what our lookup returns. */
START_TEST(ldcache_real_agrees_with_ldconfig)
{
        const char *ldconfig = find_ldconfig();
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv seen = { 0 };
        struct run_result rr = { 0 };
        struct ldcache *c = NULL;
        size_t compared = 0;
        bool libc = false;

        if (!ldconfig || access("/etc/ld.so.cache", R_OK) < 0)
                return;
        ck_assert_msg(ldcache_load(NULL, &c, &d) == 0, "%s", d.message);
        run_program(&rr, NULL, (const char *const[]){ ldconfig, "-p", NULL }, NULL);
        ck_assert_int_eq(rr.status, 0);
        for (char *line = rr.out, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                char *tag, *arrow;
                const char *ours;

                nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                while (*line == '\t' || *line == ' ')
                        line++;
                tag = strstr(line, " (libc6,x86-64) => ");
                arrow = tag ? tag + strlen(" (libc6,x86-64) => ") : NULL;
                if (!tag)
                        continue;
                *tag = '\0';
                if (strv_contains(&seen, line))
                        continue;
                strv_add(&seen, line);
                ours = ldcache_lookup(c, line, 64, 62);
                ck_assert_msg(ours && streq(ours, arrow), "%s: ldconfig says '%s', we say '%s'",
                              line, arrow, ours ? ours : "(null)");
                libc |= streq(line, "libc.so.6");
                compared++;
        }
        if (compared)
                ck_assert(libc);
        strv_release(&seen);
        run_result_release(&rr);
        ldcache_free(c);
}
END_TEST

START_TEST(resolve_through_real_cache)
{
        struct ldcache *c = NULL;
        struct resolve_env e;
        const char *want;
        _cleanup_free_ char *p = NULL;

        ck_assert_int_eq(ldcache_load(NULL, &c, NULL), 0);
        want = ldcache_lookup(c, "libc.so.6", 64, 62);
        if (want) {
                lib("app/libapp.so.1", (const char *const[]){ "libc.so.6", NULL }, NULL, false);
                resolve_env_init(&e, NULL, c);
                ck_assert_int_eq(resolve_for(&e, "app/libapp.so.1", "libc.so.6", &p), RESOLVE_LDCACHE);
                ck_assert_str_eq(p, want);
                free(TAKE_PTR(p));
                /* Without the cache, the default directories. */
                e.cache = NULL;
                ck_assert_int_eq(resolve_for(&e, "app/libapp.so.1", "libc.so.6", &p), RESOLVE_DEFAULT_DIR);
                resolve_env_release(&e);
        }
        ldcache_free(c);
}
END_TEST

/* The directories an object's RUNPATH (or RPATH, without RUNPATH) names,
 * expanded as ld.so does (a '$' that starts no known token is literal),
 * each once. */
START_TEST(object_dirs_expand_origin_once)
{
        _cleanup_free_ char *obj = at("a/lib/libx.so"), *up = at("a/lib/../deps"), *origin = at("a/lib");
        _cleanup_free_ char *joined = NULL;
        struct elf_info info = { 0 };
        struct strv dirs = { 0 };

        lib("a/lib/libx.so", NULL, "$ORIGIN/../deps:/abs/dir:${ORIGIN}:$ORIGIN:$NOSUCH/x", false);
        ck_assert_int_eq(elf_read_info(AT_FDCWD, obj, &info, NULL), 0);
        resolve_object_dirs(obj, &info, &dirs);
        joined = strv_join(&dirs, " ");
        ck_assert_msg(dirs.len == 4 && streq(dirs.items[0], up) && streq(dirs.items[1], "/abs/dir") &&
                      streq(dirs.items[2], origin) && streq(dirs.items[3], "$NOSUCH/x"),
                      "dirs: %s", joined);
        strv_release(&dirs);
        elf_info_release(&info);

        /* An RPATH counts only without a RUNPATH. */
        lib("b/libr.so", NULL, "/only/rpath", true);
        free(obj);
        obj = at("b/libr.so");
        ck_assert_int_eq(elf_read_info(AT_FDCWD, obj, &info, NULL), 0);
        resolve_object_dirs(obj, &info, &dirs);
        ck_assert_uint_eq(dirs.len, 1);
        ck_assert_str_eq(dirs.items[0], "/only/rpath");
        strv_release(&dirs);
        elf_info_release(&info);
}
END_TEST

static Suite *resolve_suite(void)
{
        Suite *s = suite_create("resolve");
        TCase *tc = tcase_create("search");
        TCase *cl = tcase_create("closure");
        TCase *ca = tcase_create("ldcache");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, object_dirs_expand_origin_once);
        tcase_add_test(tc, resolve_rpath_beats_ld_library_path);
        tcase_add_test(tc, resolve_ld_library_path_beats_runpath);
        tcase_add_test(tc, resolve_runpath_disables_rpath);
        tcase_add_test(tc, resolve_expands_origin_lib_platform);
        tcase_add_test(tc, resolve_skips_wrong_class_and_machine);
        tcase_add_test(tc, resolve_soname_with_slash_is_a_path);
        tcase_add_test(tc, resolve_not_found);
        tcase_add_test(tc, resolve_empty_entry_is_working_directory);
        tcase_add_test(tc, resolve_env_splits_like_ld_so);
        tcase_add_test(tc, resolve_source_names);
        suite_add_tcase(s, tc);

        tcase_add_checked_fixture(cl, setup, teardown);
        tcase_add_test(cl, resolve_object_follows_needed_order);
        tcase_add_test(cl, resolve_closure_is_breadth_first_each_soname_once);
        tcase_add_test(cl, resolve_closure_of_missing_file_is_error);
        tcase_add_test(cl, resolve_driver_libraries);
        suite_add_tcase(s, cl);

        tcase_add_checked_fixture(ca, setup, teardown);
        /* Hundreds of truncated files, and ldconfig -p. */
        tcase_set_timeout(ca, 60);
        tcase_add_test(ca, ldcache_synthetic_formats);
        tcase_add_test(ca, ldcache_truncated_is_ebadmsg_at_every_length);
        tcase_add_test(ca, ldcache_hostile_is_ebadmsg);
        tcase_add_test(ca, ldcache_missing_file_is_empty);
        tcase_add_test(ca, ldcache_real_agrees_with_ldconfig);
        tcase_add_test(ca, resolve_through_real_cache);
        suite_add_tcase(s, ca);
        return s;
}

int main(void)
{
        return run_suite(resolve_suite());
}
