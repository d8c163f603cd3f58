/* resolve.c: where ld.so would find a needed soname (see resolve.h), and a
 * reader of /etc/ld.so.cache.
 *
 * The cache is read whole (it is small: tens of KiB) and checked once at
 * load: every table and every string it names must lie in the file, so a
 * lookup afterwards only follows pointers that were proven good. Layout
 * (glibc elf/dl-cache.h and sysdeps/generic/ldconfig.h):
 *   old  "ld.so-1.7.0", pad to 12, u32 nlibs, then nlibs × {i32 flags,
 *        u32 key, u32 value}; strings relative to the end of the entries.
 *   new  "glibc-ld.so.cache1.1", u32 nlibs, u32 len_strings, u8 flags
 *        (byte order: 0 unset, 1 invalid, 2 little, 3 big), 3 pad, u32
 *        extension_offset, 3 × u32 unused (48 bytes), then nlibs × {i32
 *        flags, u32 key, u32 value, u32 osversion, u64 hwcap} (24 bytes),
 *        the string table; offsets are relative to this header. When the
 *        old format comes first, the new header follows its entries
 *        aligned to 8 bytes, and glibc uses only the new one.
 * An entry's flags are FLAG_ELF_LIBC6 (3) or'ed with the ABI's
 * FLAG_*_LIB64 value (x86-64 0x0300, AArch64 0x0a00, …). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <sys/stat.h>

#include "hashmap.h"
#include "resolve.h"
#include "strbuf.h"
#include "util-file.h"
#include "banned.h"

#define LDCACHE_DEFAULT "/etc/ld.so.cache"
#define LDCACHE_MAX_SIZE ((size_t)64 << 20)
#define LDCACHE_OLD_MAGIC "ld.so-1.7.0"
#define LDCACHE_NEW_MAGIC "glibc-ld.so.cache1.1"
#define LDCACHE_OLD_HEADER 16
#define LDCACHE_OLD_ENTRY 12
#define LDCACHE_NEW_HEADER 48
#define LDCACHE_NEW_ENTRY 24
#define LDCACHE_EXT_MAGIC 0xeaa42174u
#define LDCACHE_EXT_SECTION 16

#define FLAG_ELF 0x0001
#define FLAG_ELF_LIBC6 0x0003

struct ldcache_entry {
        uint32_t flags;
        uint64_t hwcap;
        const char *key;    /* the soname, inside ldcache.data */
        const char *value;  /* the path */
};

struct ldcache {
        struct strbuf data;
        struct ldcache_entry *entries;
        size_t n;
};

/* The bytes of the file and how to read its integers. */
struct ldcache_reader {
        const unsigned char *buf;
        size_t size;
        bool big_endian;
        const char *path;
};

static uint32_t rd_u32(const struct ldcache_reader *r, size_t off)
{
        const unsigned char *p = r->buf + off;

        if (r->big_endian)
                return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint64_t rd_u64(const struct ldcache_reader *r, size_t off)
{
        uint64_t a = rd_u32(r, off), b = rd_u32(r, off + 4);

        return r->big_endian ? a << 32 | b : b << 32 | a;
}

static bool host_is_big_endian(void)
{
        const uint16_t one = 1;

        return *(const unsigned char *)&one == 0;
}

_printf_(3, 4) static int bad_cache(struct diag *d, const struct ldcache_reader *r, const char *fmt, ...)
{
        struct strbuf sb = STRBUF_INIT;
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        diag_errorf(d, -EBADMSG, "malformed loader cache '%s': %s", r->path, sb.buf);
        strbuf_release(&sb);
        return -EBADMSG;
}

/* Whether [off, off + len) lies in the file (without overflowing). */
static bool in_file(const struct ldcache_reader *r, size_t off, size_t len)
{
        return off <= r->size && len <= r->size - off;
}

/* The NUL-terminated string at base + off, or NULL when it does not end
 * inside the file. */
static const char *cache_string(const struct ldcache_reader *r, size_t base, uint32_t off)
{
        size_t at = base + off;

        if (base > r->size || off >= r->size - base)
                return NULL;
        if (!memchr(r->buf + at, '\0', r->size - at))
                return NULL;
        return (const char *)r->buf + at;
}

/* Read n entries of entry_size bytes at off, strings relative to base. */
static int cache_read_entries(struct ldcache *c, const struct ldcache_reader *r, size_t off,
                              uint32_t n, size_t entry_size, size_t base, struct diag *d)
{
        if (n > (r->size - off) / entry_size)
                return bad_cache(d, r, "%" PRIu32 " entries do not fit in the file", n);
        c->entries = xreallocarray(NULL, n ? n : 1, sizeof(*c->entries));
        for (uint32_t i = 0; i < n; i++) {
                size_t e = off + (size_t)i * entry_size;
                struct ldcache_entry *x = &c->entries[i];

                x->flags = rd_u32(r, e);
                x->key = cache_string(r, base, rd_u32(r, e + 4));
                x->value = cache_string(r, base, rd_u32(r, e + 8));
                x->hwcap = entry_size == LDCACHE_NEW_ENTRY ? rd_u64(r, e + 16) : 0;
                if (!x->key || !x->value)
                        return bad_cache(d, r, "entry %" PRIu32 " names a string outside the file", i);
        }
        c->n = n;
        return 0;
}

/* The extension directory (glibc >= 2.33) must lie in the file too. */
static int cache_check_extensions(const struct ldcache_reader *r, size_t base, uint32_t ext,
                                  struct diag *d)
{
        uint32_t count;

        if (ext == 0)
                return 0;
        if (!in_file(r, base + ext, 8) || rd_u32(r, base + ext) != LDCACHE_EXT_MAGIC)
                return bad_cache(d, r, "no extension directory at offset %" PRIu32, ext);
        count = rd_u32(r, base + ext + 4);
        if (count > (r->size - base - ext - 8) / LDCACHE_EXT_SECTION)
                return bad_cache(d, r, "%" PRIu32 " extension sections do not fit in the file", count);
        for (uint32_t i = 0; i < count; i++) {
                size_t s = base + ext + 8 + (size_t)i * LDCACHE_EXT_SECTION;

                if (!in_file(r, base + rd_u32(r, s + 8), rd_u32(r, s + 12)))
                        return bad_cache(d, r, "extension section %" PRIu32 " lies outside the file", i);
        }
        return 0;
}

/* The new format, its header at base. */
static int cache_parse_new(struct ldcache *c, struct ldcache_reader *r, size_t base, struct diag *d)
{
        uint32_t nlibs, len_strings;
        size_t strings;
        int err;

        if (!in_file(r, base, LDCACHE_NEW_HEADER))
                return bad_cache(d, r, "truncated header");
        switch (r->buf[base + 28] & 3) {
        case 1:
                return bad_cache(d, r, "the header's byte order is marked invalid");
        case 2:
                r->big_endian = false;
                break;
        case 3:
                r->big_endian = true;
                break;
        default:
                r->big_endian = host_is_big_endian();
                break;
        }
        nlibs = rd_u32(r, base + 20);
        len_strings = rd_u32(r, base + 24);
        if (nlibs > (r->size - base - LDCACHE_NEW_HEADER) / LDCACHE_NEW_ENTRY)
                return bad_cache(d, r, "%" PRIu32 " entries do not fit in the file", nlibs);
        strings = base + LDCACHE_NEW_HEADER + (size_t)nlibs * LDCACHE_NEW_ENTRY;
        if (!in_file(r, strings, len_strings))
                return bad_cache(d, r, "the %" PRIu32 "-byte string table runs past the end", len_strings);
        err = cache_check_extensions(r, base, rd_u32(r, base + 32), d);
        if (err < 0)
                return err;
        return cache_read_entries(c, r, base + LDCACHE_NEW_HEADER, nlibs, LDCACHE_NEW_ENTRY, base, d);
}

/* The old format, alone or followed by the new one. */
static int cache_parse_old(struct ldcache *c, struct ldcache_reader *r, struct diag *d)
{
        uint32_t nlibs;
        size_t end, next;

        if (!in_file(r, 0, LDCACHE_OLD_HEADER))
                return bad_cache(d, r, "truncated header");
        r->big_endian = host_is_big_endian();
        nlibs = rd_u32(r, 12);
        if (nlibs > (r->size - LDCACHE_OLD_HEADER) / LDCACHE_OLD_ENTRY)
                return bad_cache(d, r, "%" PRIu32 " entries do not fit in the file", nlibs);
        end = LDCACHE_OLD_HEADER + (size_t)nlibs * LDCACHE_OLD_ENTRY;
        next = (end + 7) & ~(size_t)7;
        if (in_file(r, next, strlen(LDCACHE_NEW_MAGIC)) &&
            memcmp(r->buf + next, LDCACHE_NEW_MAGIC, strlen(LDCACHE_NEW_MAGIC)) == 0)
                return cache_parse_new(c, r, next, d);
        return cache_read_entries(c, r, LDCACHE_OLD_HEADER, nlibs, LDCACHE_OLD_ENTRY, end, d);
}

static bool has_magic(const struct strbuf *sb, const char *magic)
{
        return sb->len >= strlen(magic) && memcmp(sb->buf, magic, strlen(magic)) == 0;
}

int ldcache_load(const char *path, struct ldcache **ret, struct diag *d)
{
        struct ldcache *c = xcalloc(1, sizeof(*c));
        struct ldcache_reader r;
        int err;

        path = path ? path : LDCACHE_DEFAULT;
        strbuf_init(&c->data);
        err = file_read_regular_at(AT_FDCWD, path, NULL, LDCACHE_MAX_SIZE, false, &c->data, NULL);
        r = (struct ldcache_reader){ .buf = (const unsigned char *)c->data.buf, .size = c->data.len,
                                     .path = path };
        if (err == -ENOENT) {
                *ret = c;
                return 0;
        }
        if (err == -EFBIG)
                err = bad_cache(d, &r, "larger than %zu bytes", LDCACHE_MAX_SIZE);
        else if (err < 0)
                err = diag_errorf(d, err, "cannot read '%s': %s", path, strerror(-err));
        else if (has_magic(&c->data, LDCACHE_NEW_MAGIC))
                err = cache_parse_new(c, &r, 0, d);
        else if (has_magic(&c->data, LDCACHE_OLD_MAGIC))
                err = cache_parse_old(c, &r, d);
        else
                err = bad_cache(d, &r, "no \"%s\" or \"%s\" magic", LDCACHE_NEW_MAGIC, LDCACHE_OLD_MAGIC);
        if (err < 0) {
                ldcache_free(c);
                return err;
        }
        *ret = c;
        return 0;
}

void ldcache_free(struct ldcache *c)
{
        if (!c)
                return;
        strbuf_release(&c->data);
        free(c->entries);
        free(c);
}

/* The entry flags ldconfig writes for libraries of this class and machine
 * (glibc's _DL_CACHE_DEFAULT_ID of each ABI). */
static uint32_t ldcache_flags_for(unsigned elf_class, unsigned machine)
{
        static const struct {
                unsigned elf_class, machine;
                uint32_t flags;
        } abis[] = {
                { 64, EM_X86_64, 0x0303 },   /* FLAG_X8664_LIB64 */
                { 32, EM_X86_64, 0x0803 },   /* FLAG_X8664_LIBX32 */
                { 64, EM_AARCH64, 0x0a03 },  /* FLAG_AARCH64_LIB64 */
                { 32, EM_ARM, 0x0903 },      /* FLAG_ARM_LIBHF */
                { 64, EM_PPC64, 0x0503 },    /* FLAG_POWERPC_LIB64 */
                { 64, EM_S390, 0x0403 },     /* FLAG_S390_LIB64 */
                { 64, EM_SPARCV9, 0x0103 },  /* FLAG_SPARC_LIB64 */
                { 64, EM_IA_64, 0x0203 },    /* FLAG_IA64_LIB64 */
                { 64, EM_RISCV, 0x1003 },    /* FLAG_RISCV_FLOAT_ABI_DOUBLE */
        };

        for (size_t i = 0; i < ELEMENTSOF(abis); i++)
                if (abis[i].elf_class == elf_class && abis[i].machine == machine)
                        return abis[i].flags;
        return FLAG_ELF_LIBC6;
}

const char *ldcache_lookup(const struct ldcache *c, const char *soname, unsigned elf_class,
                           unsigned machine)
{
        uint32_t want = ldcache_flags_for(elf_class, machine);
        const char *hwcap_match = NULL;

        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n; i++) {
                const struct ldcache_entry *e = &c->entries[i];

                /* glibc's generic check also takes plain FLAG_ELF entries. */
                if (!streq(e->key, soname) ||
                    !(e->flags == want || (want == FLAG_ELF_LIBC6 && e->flags == FLAG_ELF)))
                        continue;
                /* Entries of hwcap subdirectories depend on the CPU; the
                 * baseline one is what every CPU can load. */
                if (e->hwcap == 0)
                        return e->value;
                if (!hwcap_match)
                        hwcap_match = e->value;
        }
        return hwcap_match;
}

/* A set of paths with what a candidate check found. */
struct memo_entry {
        struct hashmap_entry ent;  /* by path */
        char *path;
        bool is_elf;               /* a regular file with an ELF identification */
        struct elf_info ident;     /* class, machine, byte order */
};

struct resolve_memo {
        struct hashmap paths;      /* of struct memo_entry */
};

static bool memo_equal(const struct hashmap_entry *entry, _unused_ const struct hashmap_entry *key,
                       const void *keydata)
{
        return streq(hashmap_entry_of(entry, const struct memo_entry, ent)->path, keydata);
}

static void memo_entry_free(struct hashmap_entry *e)
{
        struct memo_entry *m = hashmap_entry_of(e, struct memo_entry, ent);

        free(m->path);
        free(m);
}

/* The entry for path, looked at on first use. */
static const struct memo_entry *memo_get(struct resolve_memo *m, const char *path)
{
        struct hashmap_entry key;
        struct memo_entry *e;
        struct stat st;

        hashmap_entry_init(&key, hash_str(path));
        e = hashmap_entry_of(hashmap_get(&m->paths, &key, path), struct memo_entry, ent);
        if (e)
                return e;
        e = xcalloc(1, sizeof(*e));
        hashmap_entry_init(&e->ent, key.hash);
        e->path = xstrdup(path);
        e->is_elf = stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
                    elf_read_ident(AT_FDCWD, path, &e->ident) == 0;
        hashmap_add(&m->paths, &e->ent);
        return e;
}

static struct resolve_memo *memo_new(void)
{
        struct resolve_memo *m = xmalloc(sizeof(*m));

        hashmap_init(&m->paths, memo_equal, 0);
        return m;
}

static void memo_free(struct resolve_memo *m)
{
        if (!m)
                return;
        hashmap_release(&m->paths, memo_entry_free);
        free(m);
}

void resolve_env_init(struct resolve_env *e, const char *ld_library_path, const struct ldcache *cache)
{
        *e = (struct resolve_env){ .cache = cache, .memo = memo_new() };
        if (!ld_library_path || !*ld_library_path)
                return;
        for (const char *s = ld_library_path;;) {
                size_t n = strcspn(s, ":;");

                strv_push(&e->ld_library_path, xstrndup(s, n));
                if (!s[n])
                        break;
                s += n + 1;
        }
}

void resolve_env_release(struct resolve_env *e)
{
        strv_release(&e->ld_library_path);
        memo_free(e->memo);
        e->memo = NULL;
        e->cache = NULL;
}

static const char *const resolve_source_names[_RESOLVE_SOURCE_MAX] = {
        [RESOLVE_NOT_FOUND] = "not found",
        [RESOLVE_RPATH] = "rpath",
        [RESOLVE_LD_LIBRARY_PATH] = "LD_LIBRARY_PATH",
        [RESOLVE_RUNPATH] = "runpath",
        [RESOLVE_LDCACHE] = "ld.so.cache",
        [RESOLVE_DEFAULT_DIR] = "default",
        [RESOLVE_PATH] = "path",
};

const char *resolve_source_to_string(enum resolve_source s)
{
        return s < _RESOLVE_SOURCE_MAX ? resolve_source_names[s] : NULL;
}

/* One lookup: the object whose need is resolved, and what we found. */
struct search {
        const struct elf_info *obj;
        const char *soname;
        char *origin;           /* the object's directory, absolute */
        struct resolved *out;
        struct resolve_memo *memo; /* or NULL */
};

/* Whether path is a library ld.so would take for the object. */
static bool candidate_ok(const struct search *s, const char *path)
{
        struct memo_entry fresh = { 0 };
        const struct memo_entry *m;
        struct stat st;

        if (s->memo)
                m = memo_get(s->memo, path);
        else {
                fresh.is_elf = stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
                               elf_read_ident(AT_FDCWD, path, &fresh.ident) == 0;
                m = &fresh;
        }
        return m->is_elf && m->ident.elf_class == s->obj->elf_class &&
               m->ident.machine == s->obj->machine &&
               m->ident.little_endian == s->obj->little_endian;
}

/* The length of the dynamic string token `name` at s ("$NAME" not followed
 * by an identifier character, or "${NAME}"), or 0. */
static size_t dst_match(const char *s, size_t len, const char *name)
{
        size_t n = strlen(name);
        bool curly = len > 1 && s[1] == '{';
        size_t at = curly ? 2 : 1;

        if (len < at + n || strncmp(s + at, name, n) != 0)
                return 0;
        if (curly)
                return len > at + n && s[at + n] == '}' ? at + n + 1 : 0;
        if (len > at + n && (ascii_isalpha(s[at + n]) || ascii_isdigit(s[at + n]) || s[at + n] == '_'))
                return 0;
        return at + n;
}

/* entry (len bytes) with $ORIGIN, $LIB and $PLATFORM expanded, or NULL
 * when it names a token we cannot expand (ld.so drops such entries). An
 * empty entry is the working directory. */
static char *expand_entry(const struct search *s, const char *entry, size_t len)
{
        const char *platform = elf_machine_to_arch(s->obj->machine);
        const struct {
                const char *name, *value;
        } tokens[] = {
                { "ORIGIN", s->origin },
                { "LIB", s->obj->elf_class == 64 ? "lib64" : "lib" },
                { "PLATFORM", platform },
        };
        struct strbuf sb = STRBUF_INIT;

        if (len == 0)
                return xstrdup(".");
        for (size_t i = 0; i < len;) {
                size_t k, m = 0;

                for (k = 0; entry[i] == '$' && k < ELEMENTSOF(tokens); k++)
                        if ((m = dst_match(entry + i, len - i, tokens[k].name)))
                                break;
                if (!m) {
                        strbuf_addch(&sb, entry[i++]);
                        continue;
                }
                if (!tokens[k].value) {
                        strbuf_release(&sb);
                        return NULL;
                }
                strbuf_addstr(&sb, tokens[k].value);
                i += m;
        }
        return strbuf_detach(&sb);
}

void resolve_object_dirs(const char *obj_path, const struct elf_info *obj, struct strv *ret)
{
        _cleanup_free_ char *abs = path_absolute(obj_path);
        struct search s = { .obj = obj, .origin = path_dirname(abs) };
        const char *lists[] = { obj->runpath ? NULL : obj->rpath, obj->runpath };

        for (size_t l = 0; l < ELEMENTSOF(lists); l++)
                for (const char *p = lists[l]; p;) {
                        size_t n = strcspn(p, ":");
                        char *dir = expand_entry(&s, p, n);

                        if (dir && !strv_contains(ret, dir))
                                strv_push(ret, dir);
                        else
                                free(dir);
                        p = p[n] ? p + n + 1 : NULL;
                }
        free(s.origin);
}

/* Take dir/soname when it is a candidate; dir is owned. */
static bool try_dir(struct search *s, char *dir, enum resolve_source source)
{
        char *path;

        if (!dir)
                return false;
        path = path_join(dir, s->soname);
        if (!candidate_ok(s, path)) {
                free(path);
                free(dir);
                return false;
        }
        s->out->path = path;
        s->out->searched_entry = dir;
        s->out->source = source;
        return true;
}

static bool try_entry(struct search *s, const char *entry, size_t len, enum resolve_source source)
{
        return try_dir(s, expand_entry(s, entry, len), source);
}

/* A DT_RPATH or DT_RUNPATH value: entries separated by ':'. */
static bool try_path_list(struct search *s, const char *list, enum resolve_source source)
{
        for (const char *p = list;;) {
                size_t n = strcspn(p, ":");

                if (try_entry(s, p, n, source))
                        return true;
                if (!p[n])
                        return false;
                p += n + 1;
        }
}

static bool try_default_dirs(struct search *s)
{
        static const char *const x86_64[] = {
                "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                "/lib", "/usr/lib", NULL,
        };
        static const char *const aarch64[] = {
                "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64",
                "/lib", "/usr/lib", NULL,
        };
        static const char *const other[] = { "/lib", "/usr/lib", NULL };
        const char *const *dirs = other;

        if (s->obj->elf_class == 64 && s->obj->machine == EM_X86_64)
                dirs = x86_64;
        else if (s->obj->elf_class == 64 && s->obj->machine == EM_AARCH64)
                dirs = aarch64;
        for (; *dirs; dirs++)
                if (try_dir(s, xstrdup(*dirs), RESOLVE_DEFAULT_DIR))
                        return true;
        return false;
}

static bool try_cache(struct search *s, const struct ldcache *cache)
{
        const char *path = ldcache_lookup(cache, s->soname, s->obj->elf_class, s->obj->machine);

        if (!path || !candidate_ok(s, path))
                return false;
        s->out->path = xstrdup(path);
        s->out->source = RESOLVE_LDCACHE;
        return true;
}

/* ld.so's order (resolve.h); true when found. */
static bool search_run(struct search *s, const struct resolve_env *e)
{
        const struct elf_info *o = s->obj;

        if (o->rpath && !o->runpath && try_path_list(s, o->rpath, RESOLVE_RPATH))
                return true;
        for (size_t i = 0; i < e->ld_library_path.len; i++) {
                const char *entry = e->ld_library_path.items[i];

                if (try_entry(s, entry, strlen(entry), RESOLVE_LD_LIBRARY_PATH))
                        return true;
        }
        if (o->runpath && try_path_list(s, o->runpath, RESOLVE_RUNPATH))
                return true;
        return try_cache(s, e->cache) || try_default_dirs(s);
}

int resolve_needed(const struct resolve_env *e, const char *obj_path, const struct elf_info *obj,
                   const char *soname, struct resolved *ret, struct diag *d)
{
        _cleanup_free_ char *abs = path_absolute(obj_path);
        struct resolved r = { .soname = xstrdup(soname), .source = RESOLVE_NOT_FOUND };
        struct search s = { .obj = obj, .soname = soname, .out = &r, .memo = e->memo };

        if (!*soname) {
                free(r.soname);
                return diag_errorf(d, -EINVAL, "'%s' needs a library with an empty name", obj_path);
        }
        if (strchr(soname, '/')) {
                if (candidate_ok(&s, soname)) {
                        r.path = xstrdup(soname);
                        r.source = RESOLVE_PATH;
                }
        } else {
                s.origin = path_dirname(abs);
                search_run(&s, e);
                free(s.origin);
        }
        *ret = r;
        return 0;
}

void resolved_release(struct resolved *r)
{
        free(r->soname);
        free(r->path);
        free(r->searched_entry);
        *r = (struct resolved){ .source = RESOLVE_NOT_FOUND };
}

static void resolve_list_append(struct resolve_list *l, struct resolved *r)
{
        l->items = xreallocarray(l->items, l->n + 1, sizeof(*l->items));
        l->items[l->n++] = *r;
        *r = (struct resolved){ 0 };
}

int resolve_object(const struct resolve_env *e, const char *obj_path, struct elf_info *info_ret,
                   struct resolve_list *ret, struct diag *d)
{
        struct elf_info info = { 0 };
        struct resolve_list l = { 0 };
        int r;

        r = elf_read_info(AT_FDCWD, obj_path, &info, d);
        if (r < 0)
                return r;
        for (size_t i = 0; i < info.needed.len; i++) {
                struct resolved x;

                r = resolve_needed(e, obj_path, &info, info.needed.items[i], &x, d);
                if (r < 0) {
                        resolve_list_release(&l);
                        elf_info_release(&info);
                        return r;
                }
                resolve_list_append(&l, &x);
        }
        if (info_ret)
                *info_ret = info;
        else
                elf_info_release(&info);
        *ret = l;
        return 0;
}

/* Append the needs of one object that no earlier object needed. */
static int closure_add(const struct resolve_env *e, const char *obj_path, struct strv *seen,
                       struct resolve_list *l, struct diag *d)
{
        struct resolve_list direct = { 0 };
        int r = resolve_object(e, obj_path, NULL, &direct, d);

        if (r < 0)
                return r;
        for (size_t i = 0; i < direct.n; i++) {
                if (strv_contains(seen, direct.items[i].soname))
                        continue;
                strv_add(seen, direct.items[i].soname);
                resolve_list_append(l, &direct.items[i]);
        }
        resolve_list_release(&direct);
        return 0;
}

int resolve_closure(const struct resolve_env *e, const char *obj_path, struct resolve_list *ret,
                    struct diag *d)
{
        struct resolve_list l = { 0 };
        struct elf_info root = { 0 };
        struct strv seen = { 0 };
        int r;

        r = elf_read_info(AT_FDCWD, obj_path, &root, d);
        if (r < 0)
                return r;
        /* A need of the root's own soname is the root, as for ld.so. */
        if (root.soname)
                strv_add(&seen, root.soname);
        elf_info_release(&root);
        r = closure_add(e, obj_path, &seen, &l, d);
        /* Objects that cannot be read are where ld.so would fail; their
         * needs stay unknown, the others go on. */
        for (size_t i = 0; r >= 0 && i < l.n; i++)
                if (l.items[i].path) {
                        _cleanup_free_ char *p = xstrdup(l.items[i].path);
                        (void)closure_add(e, p, &seen, &l, NULL);
                }
        strv_release(&seen);
        if (r < 0) {
                resolve_list_release(&l);
                return r;
        }
        *ret = l;
        return 0;
}

void resolve_list_release(struct resolve_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                resolved_release(&l->items[i]);
        free(l->items);
        *l = (struct resolve_list){ 0 };
}

bool resolve_is_driver_library(const char *soname)
{
        static const char *const prefixes[] = {
                "libcuda.so.", "libnvidia-", "libnvcuvid.so.",
        };

        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (startswith(soname, prefixes[i]) && strstr(soname, ".so.") &&
                    soname[strlen(soname) - 1] != '.')
                        return true;
        return false;
}
