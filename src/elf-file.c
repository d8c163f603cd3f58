/* elf-file.c: sonames, DT_NEEDED, run paths and marker strings, read with libelf.
 *
 * Bytes are only ever reached through libelf's bounds-checked accessors
 * (gelf_getehdr, gelf_getphdr, elf_getdata, elf_getdata_rawchunk), and every
 * string offset taken from the file is checked against its table here, so a
 * hostile file yields -EBADMSG instead of a crash. The file is never mapped:
 * a file of at most 64 KiB is read whole in one read and given to libelf as
 * memory (elf_memory); of a bigger one libelf reads (pread) only the
 * headers and the sections asked for, and
 * .rodata is searched in bounded chunks, so a library truncated while we
 * read it is an error ("changed while it was read"), not a SIGBUS, and a
 * 500 MB library costs what its headers and .rodata weigh. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>

#include <gelf.h>
#include <libelf.h>

#include "elf-file.h"
#include "strbuf.h"
#include "util-file.h"
#include "banned.h"

#define FIND_STRINGS_MAX_LEN 256
#define FIND_STRINGS_WHOLE_FILE_MAX ((uint64_t)64 << 20)
/* The chunk .rodata is read in (small enough to stay in cache while
 * memmem runs over it), and the most libelf may read for one piece
 * of the dynamic linking data (a real .dynstr is a few MiB). */
#define FIND_STRINGS_CHUNK ((size_t)256 << 10)
#define DYNAMIC_PART_MAX ((uint64_t)64 << 20)
/* A file this small is read whole in one read and handed to libelf as
 * memory: one system call instead of libelf's fcntl, fstat and a pread a
 * header (a stub, libnvToolsExt, a small plugin). */
#define ELF_SMALL_FILE ((uint64_t)64 << 10)

/* An open ELF file: the descriptor, the libelf handle over it (reading
 * with pread, never mapping), the file size, which bounds everything we
 * allocate on its behalf, and its stat when opened, to tell a file that
 * changed under us from a malformed one. */
struct elf_file {
        int fd;
        Elf *elf;
        char *image; /* the whole file, when it is small; else NULL */
        uint64_t size;
        GElf_Ehdr ehdr;
        struct stat st;
};

#define ELF_FILE_INIT { .fd = -1, .elf = NULL, .image = NULL, .size = 0, .ehdr = { { 0 } }, .st = { 0 } }

static void elf_file_close(struct elf_file *f)
{
        if (f->elf)
                elf_end(f->elf);
        free(f->image);
        if (f->fd >= 0)
                close(f->fd);
        *f = (struct elf_file)ELF_FILE_INIT;
}

/* A string table: the bytes of .dynstr (or of the DT_STRTAB chunk). */
struct strtab {
        const char *buf;
        size_t size;
};

_printf_(3, 4) static int malformed(struct diag *d, const char *path, const char *fmt, ...)
{
        struct strbuf sb = STRBUF_INIT;
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        diag_errorf(d, -EBADMSG, "malformed ELF file '%s': %s", path, sb.buf);
        strbuf_release(&sb);
        return -EBADMSG;
}

static const char *libelf_error(void)
{
        const char *m = elf_errmsg(-1);

        return m ? m : "unknown libelf error";
}

static void libelf_version(void)
{
        (void)elf_version(EV_CURRENT);
}

static void libelf_init(void)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;

        /* Once for the process: the scan's threads open ELF files at once,
         * and elf_version() sets libelf's own global. */
        (void)pthread_once(&once, libelf_version);
}

/* An error r met reading f becomes -ESTALE when the file changed since it
 * was opened (truncated, rewritten): that, not its contents, is the news. */
static int elf_file_changed(const struct elf_file *f, const char *path, int r, struct diag *d)
{
        if (r >= 0 || f->fd < 0 || !file_changed(f->fd, &f->st))
                return r;
        return diag_errorf(d, -ESTALE, "'%s' changed while it was read", path);
}

/* Read the ELF header, and refuse a section header table that does not
 * lie in the file: libelf would quietly report no sections at all. */
static int elf_file_check_headers(struct elf_file *f, const char *path, struct diag *d)
{
        int cls = gelf_getclass(f->elf);
        size_t shnum;

        if (cls != ELFCLASS32 && cls != ELFCLASS64)
                return malformed(d, path, "unknown ELF class %d", cls);
        if (!gelf_getehdr(f->elf, &f->ehdr))
                return malformed(d, path, "cannot read the ELF header: %s", libelf_error());
        if (elf_getshdrnum(f->elf, &shnum) < 0)
                return malformed(d, path, "%s", libelf_error());
        if (shnum == 0 && f->ehdr.e_shoff != 0 &&
            (f->ehdr.e_shnum != 0 || f->ehdr.e_shoff >= f->size))
                return malformed(d, path, "the section header table (offset %" PRIu64
                                 ", %u entries) does not lie in the file",
                                 (uint64_t)f->ehdr.e_shoff, (unsigned)f->ehdr.e_shnum);
        return 0;
}

/* The small files read during a visit (elf_memo_begin .. elf_memo_end),
 * by the name they were opened by: the detectors ask one library for its
 * soname, its DT_NEEDED and its version strings, and the file is read once
 * for all three. The entries are the thread's own. */
#define ELF_MEMO_SLOTS 4

struct elf_memo {
        int dirfd;
        char *path;
        char *image;
        uint64_t size;
        struct stat st;
};

static _Thread_local struct elf_memo memo[ELF_MEMO_SLOTS];
static _Thread_local unsigned memo_next;
static _Thread_local bool memo_on;
static _Thread_local int memo_dirfd;

void elf_memo_begin(int dirfd)
{
        elf_memo_end();
        memo_on = true;
        memo_dirfd = dirfd;
}

/* Only names that mean one file for the whole visit: relative to the
 * visit's own descriptor, or absolute (another descriptor's number may
 * be closed and given to another directory meanwhile). */
static bool memo_covers(int dirfd, const char *path)
{
        return memo_on && ((dirfd == memo_dirfd && path[0] != '/') ||
                           (dirfd == AT_FDCWD && path[0] == '/'));
}

void elf_memo_end(void)
{
        for (size_t i = 0; i < ELF_MEMO_SLOTS; i++) {
                free(memo[i].path);
                free(memo[i].image);
                memo[i] = (struct elf_memo){ .dirfd = -1 };
        }
        memo_next = 0;
        memo_on = false;
}

static bool memo_take(int dirfd, const char *path, struct elf_file *f)
{
        if (!memo_covers(dirfd, path))
                return false;
        for (size_t i = 0; i < ELF_MEMO_SLOTS; i++)
                if (memo[i].path && memo[i].dirfd == dirfd && streq(memo[i].path, path)) {
                        f->image = xmalloc((size_t)memo[i].size + 1);
                        memcpy(f->image, memo[i].image, (size_t)memo[i].size);
                        f->size = memo[i].size;
                        f->st = memo[i].st;
                        return true;
                }
        return false;
}

static void memo_keep(int dirfd, const char *path, const struct elf_file *f)
{
        struct elf_memo *m;

        if (!memo_covers(dirfd, path))
                return;
        m = &memo[memo_next++ % ELF_MEMO_SLOTS];
        free(m->path);
        free(m->image);
        *m = (struct elf_memo){
                .dirfd = dirfd, .path = xstrdup(path), .image = xmalloc((size_t)f->size + 1),
                .size = f->size, .st = f->st,
        };
        memcpy(m->image, f->image, (size_t)f->size);
}

/* Read exactly len bytes at off: a read that comes back short (at the end
 * of the file) means the file shrank since its stat: -ESTALE. */
static int pread_exactly(int fd, char *buf, size_t len, uint64_t off, const char *path,
                         struct diag *d)
{
        size_t got = 0;

        while (got < len) {
                ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;
                        return diag_errorf(d, r, "cannot read '%s': %s", path, strerror(-r));
                }
                if (n == 0)
                        return diag_errorf(d, -ESTALE, "'%s' changed while it was read", path);
                got += (size_t)n;
        }
        return 0;
}

/* Read the whole of a small file into f->image; a file that came back
 * shorter than its st_size changed while it was read: -ESTALE. */
static int elf_file_read_image(struct elf_file *f, const char *path, struct diag *d)
{
        /* The st_size bytes the open saw, no read for an EOF: what is
         * appended later is not part of what was checked. */
        f->image = xmalloc((size_t)f->size + 1);
        return pread_exactly(f->fd, f->image, (size_t)f->size, 0, path, d);
}

/* Open dirfd/path and hand it to libelf. Anything that is not a regular
 * file starting with an ELF identification is -ENOEXEC; a device or FIFO
 * is never opened (file_open_regular_at). */
static int elf_file_open(int dirfd, const char *path, struct elf_file *ret, struct diag *d)
{
        struct elf_file f = ELF_FILE_INIT;
        unsigned char magic[SELFMAG];
        ssize_t n;
        int r;

        libelf_init();

        if (memo_take(dirfd, path, &f)) {
                memcpy(magic, f.image, f.size < SELFMAG ? (size_t)f.size : SELFMAG);
                n = f.size < SELFMAG ? (ssize_t)f.size : SELFMAG;
                goto have_magic;
        }
        r = file_open_regular_at(dirfd, path, NULL, &f.fd, &f.st, d);
        if (r == -EINVAL)
                return -ENOEXEC; /* diag: "'F' is a FIFO, not a regular file" */
        if (r < 0)
                return r;
        if (f.st.st_size < (off_t)SELFMAG)
                goto not_elf;
        f.size = (uint64_t)f.st.st_size;

        if (f.size <= ELF_SMALL_FILE) {
                r = elf_file_read_image(&f, path, d);
                if (r < 0) {
                        elf_file_close(&f);
                        return r;
                }
                memcpy(magic, f.image, SELFMAG);
                n = SELFMAG;
                memo_keep(dirfd, path, &f);
        } else {
                do
                        n = pread(f.fd, magic, sizeof(magic), 0);
                while (n < 0 && errno == EINTR);
                if (n < 0) {
                        r = -errno;
                        elf_file_close(&f);
                        return diag_errorf(d, r, "cannot read '%s': %s", path, strerror(-r));
                }
        }
have_magic:
        if ((size_t)n != sizeof(magic) || memcmp(magic, ELFMAG, SELFMAG) != 0)
                goto not_elf;

        /* ELF_C_READ, not ELF_C_READ_MMAP: a mapping of a file that shrinks
         * faults (SIGBUS) where a read just comes back short. A small file
         * is libelf's as memory: our own copy, which nothing can shrink. */
        f.elf = f.image ? elf_memory(f.image, (size_t)f.size) : elf_begin(f.fd, ELF_C_READ, NULL);
        if (!f.elf) {
                r = malformed(d, path, "%s", libelf_error());
                goto fail;
        }
        if (elf_kind(f.elf) != ELF_K_ELF)
                goto not_elf;
        r = elf_file_check_headers(&f, path, d);
        if (r < 0)
                goto fail;

        *ret = f;
        return 0;

not_elf:
        r = diag_errorf(d, -ENOEXEC, "'%s' is not an ELF file", path);
fail:
        r = elf_file_changed(&f, path, r, d);
        elf_file_close(&f);
        return r;
}

int elf_read_ident(int dirfd, const char *path, struct elf_info *ret)
{
        _cleanup_close_ int fd = -1;
        unsigned char h[20];
        ssize_t n;
        bool le;
        int r;

        r = file_open_regular_at(dirfd, path, NULL, &fd, NULL, NULL);
        if (r == -EINVAL)
                return -ENOEXEC;
        if (r < 0)
                return r;
        do
                n = pread(fd, h, sizeof(h), 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t)n != sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0 ||
            (h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64) ||
            (h[EI_DATA] != ELFDATA2LSB && h[EI_DATA] != ELFDATA2MSB))
                return -ENOEXEC;
        le = h[EI_DATA] == ELFDATA2LSB;
        *ret = (struct elf_info){
                .elf_class = h[EI_CLASS] == ELFCLASS64 ? 64 : 32,
                .little_endian = le,
                .machine = le ? (unsigned)(h[18] | h[19] << 8) : (unsigned)(h[18] << 8 | h[19]),
                .type = le ? (unsigned)(h[16] | h[17] << 8) : (unsigned)(h[16] << 8 | h[17]),
        };
        return 0;
}

/* The NUL-terminated string at off in t, or -EBADMSG. */
static int strtab_get(const struct strtab *t, uint64_t off, const char **ret_s, size_t *ret_len)
{
        const char *s, *e;

        if (!t || off >= t->size)
                return -EBADMSG;
        s = t->buf + off;
        e = memchr(s, '\0', t->size - (size_t)off);
        if (!e)
                return -EBADMSG;
        *ret_s = s;
        *ret_len = (size_t)(e - s);
        return 0;
}

static bool dyn_tag_is_string(int64_t tag)
{
        return tag == DT_NEEDED || tag == DT_SONAME || tag == DT_RUNPATH || tag == DT_RPATH;
}

/* The file offset and the bytes left in its segment of a virtual address,
 * found through the PT_LOAD segments. */
static int vaddr_to_offset(Elf *elf, size_t phnum, uint64_t vaddr, uint64_t *ret_off,
                           uint64_t *ret_avail)
{
        for (size_t i = 0; i < phnum; i++) {
                GElf_Phdr ph;
                uint64_t delta;

                if (!gelf_getphdr(elf, (int)i, &ph))
                        return -EBADMSG;
                if (ph.p_type != PT_LOAD || vaddr < ph.p_vaddr)
                        continue;
                delta = vaddr - ph.p_vaddr;
                if (delta >= ph.p_filesz || ph.p_offset > UINT64_MAX - delta)
                        continue;
                *ret_off = ph.p_offset + delta;
                *ret_avail = ph.p_filesz - delta;
                return 0;
        }
        return -ENOENT;
}

/* Locate the dynamic array: the SHT_DYNAMIC section and its sh_link string
 * table when there is one, else PT_DYNAMIC and DT_STRTAB. On success
 * *ret_dyn is NULL when the file has no dynamic array at all; *ret_strscn is
 * the string table section, or NULL when DT_STRTAB must be used. */
static int find_dynamic(Elf *elf, const char *path, Elf_Data **ret_dyn, Elf_Scn **ret_strscn,
                        struct diag *d)
{
        Elf_Scn *scn = NULL;
        size_t phnum;

        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh, strsh;
                Elf_Scn *strscn;
                Elf_Data *data;

                if (!gelf_getshdr(scn, &sh))
                        return malformed(d, path, "%s", libelf_error());
                if (sh.sh_type != SHT_DYNAMIC)
                        continue;
                if (sh.sh_size > DYNAMIC_PART_MAX)
                        return malformed(d, path, "the dynamic section is %" PRIu64 " bytes",
                                         (uint64_t)sh.sh_size);
                data = elf_getdata(scn, NULL);
                if (!data)
                        return malformed(d, path, "cannot read the dynamic section: %s",
                                         libelf_error());
                strscn = sh.sh_link ? elf_getscn(elf, sh.sh_link) : NULL;
                if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
                        return malformed(d, path,
                                         "the dynamic section links to section %" PRIu32
                                         ", which is not a string table",
                                         (uint32_t)sh.sh_link);
                if (strsh.sh_size > DYNAMIC_PART_MAX)
                        return malformed(d, path, "the dynamic string table is %" PRIu64 " bytes",
                                         (uint64_t)strsh.sh_size);
                *ret_dyn = data;
                *ret_strscn = strscn;
                return 0;
        }

        if (elf_getphdrnum(elf, &phnum) < 0)
                return malformed(d, path, "%s", libelf_error());
        for (size_t i = 0; i < phnum; i++) {
                GElf_Phdr ph;
                Elf_Data *data;

                if (!gelf_getphdr(elf, (int)i, &ph))
                        return malformed(d, path, "cannot read program header %zu: %s", i,
                                         libelf_error());
                if (ph.p_type != PT_DYNAMIC)
                        continue;
                if (ph.p_offset > INT64_MAX)
                        return malformed(d, path, "PT_DYNAMIC offset %" PRIu64
                                         " beyond the end of the file", (uint64_t)ph.p_offset);
                if (ph.p_filesz > DYNAMIC_PART_MAX)
                        return malformed(d, path, "PT_DYNAMIC is %" PRIu64 " bytes",
                                         (uint64_t)ph.p_filesz);
                data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_DYN);
                if (!data)
                        return malformed(d, path,
                                         "PT_DYNAMIC (offset %" PRIu64 ", size %" PRIu64
                                         ") does not lie in the file: %s",
                                         (uint64_t)ph.p_offset, (uint64_t)ph.p_filesz,
                                         libelf_error());
                *ret_dyn = data;
                *ret_strscn = NULL;
                return 0;
        }
        *ret_dyn = NULL;
        *ret_strscn = NULL;
        return 0;
}

/* The string table for the dynamic array: the linked section, or the
 * DT_STRTAB/DT_STRSZ chunk translated through the PT_LOAD segments. */
static int dynamic_strtab(Elf *elf, const char *path, Elf_Data *dyn, Elf_Scn *strscn,
                          struct strtab *ret, struct diag *d)
{
        uint64_t addr = 0, size = 0, off, avail;
        bool have_addr = false, have_size = false;
        Elf_Data *data;
        size_t phnum;
        GElf_Dyn e;

        if (strscn) {
                data = elf_getdata(strscn, NULL);
                if (!data)
                        return malformed(d, path, "cannot read the dynamic string table: %s",
                                         libelf_error());
                *ret = (struct strtab){ .buf = data->d_buf, .size = data->d_buf ? data->d_size : 0 };
                return 0;
        }

        for (int i = 0; gelf_getdyn(dyn, i, &e); i++) {
                if (e.d_tag == DT_NULL)
                        break;
                if (e.d_tag == DT_STRTAB && !have_addr) {
                        addr = e.d_un.d_ptr;
                        have_addr = true;
                } else if (e.d_tag == DT_STRSZ && !have_size) {
                        size = e.d_un.d_val;
                        have_size = true;
                }
        }
        if (!have_addr)
                return malformed(d, path, "the dynamic array names strings but has no DT_STRTAB");
        if (elf_getphdrnum(elf, &phnum) < 0)
                return malformed(d, path, "%s", libelf_error());
        if (vaddr_to_offset(elf, phnum, addr, &off, &avail) < 0)
                return malformed(d, path, "DT_STRTAB address 0x%" PRIx64
                                 " is not in a loaded segment", addr);
        if (!have_size)
                size = avail;
        if (size > avail)
                return malformed(d, path, "DT_STRSZ %" PRIu64 " runs past its segment", size);
        if (size == 0) {
                *ret = (struct strtab){ .buf = NULL, .size = 0 };
                return 0;
        }
        if (size > DYNAMIC_PART_MAX)
                return malformed(d, path, "DT_STRSZ %" PRIu64 " is too large", size);
        if (off > INT64_MAX)
                return malformed(d, path, "DT_STRTAB offset %" PRIu64
                                 " beyond the end of the file", off);
        data = elf_getdata_rawchunk(elf, (int64_t)off, (size_t)size, ELF_T_BYTE);
        if (!data || !data->d_buf)
                return malformed(d, path,
                                 "DT_STRTAB (offset %" PRIu64 ", size %" PRIu64
                                 ") does not lie in the file: %s", off, size, libelf_error());
        *ret = (struct strtab){ .buf = data->d_buf, .size = data->d_size };
        return 0;
}

/* Fill info's soname, needed, runpath and rpath from the dynamic array. The
 * strings copied are charged against *budget (the file size), so a file
 * repeating one long string in many entries cannot make us allocate more
 * than it weighs. */
static int dynamic_collect(Elf *elf, const char *path, Elf_Data *dyn, Elf_Scn *strscn,
                           uint64_t budget, struct elf_info *info, struct diag *d)
{
        struct strtab tab = { 0 };
        bool has_strings = false;
        GElf_Dyn e;
        int i, r;

        for (i = 0; gelf_getdyn(dyn, i, &e); i++) {
                if (e.d_tag == DT_NULL)
                        break;
                if (dyn_tag_is_string(e.d_tag))
                        has_strings = true;
        }
        if (!has_strings)
                return 0;

        r = dynamic_strtab(elf, path, dyn, strscn, &tab, d);
        if (r < 0)
                return r;

        for (i = 0; gelf_getdyn(dyn, i, &e); i++) {
                const char *s;
                size_t len;
                char **slot;

                if (e.d_tag == DT_NULL)
                        break;
                if (!dyn_tag_is_string(e.d_tag))
                        continue;
                if (strtab_get(&tab, e.d_un.d_val, &s, &len) < 0)
                        return malformed(d, path,
                                         "dynamic entry %d: string offset %" PRIu64
                                         " is not a terminated string in the %zu-byte string table",
                                         i, (uint64_t)e.d_un.d_val, tab.size);
                if (len + 1 + sizeof(char *) > budget)
                        return malformed(d, path, "the dynamic array names too many strings");
                budget -= len + 1 + sizeof(char *);

                switch (e.d_tag) {
                case DT_NEEDED:
                        strv_push(&info->needed, xstrndup(s, len));
                        continue;
                case DT_SONAME:
                        slot = &info->soname;
                        break;
                case DT_RUNPATH:
                        slot = &info->runpath;
                        break;
                default:
                        slot = &info->rpath;
                        break;
                }
                /* Like the dynamic loader, the first of a repeated tag wins. */
                if (!*slot)
                        *slot = xstrndup(s, len);
        }
        return 0;
}

int elf_read_info(int dirfd, const char *path, struct elf_info *ret, struct diag *d)
{
        struct elf_file f = ELF_FILE_INIT;
        struct elf_info info = { 0 };
        Elf_Scn *strscn = NULL;
        Elf_Data *dyn = NULL;
        int r;

        r = elf_file_open(dirfd, path, &f, d);
        if (r < 0)
                return r;

        info.elf_class = gelf_getclass(f.elf) == ELFCLASS32 ? 32 : 64;
        info.machine = f.ehdr.e_machine;
        info.little_endian = f.ehdr.e_ident[EI_DATA] == ELFDATA2LSB;
        info.type = f.ehdr.e_type;

        r = find_dynamic(f.elf, path, &dyn, &strscn, d);
        if (r < 0)
                goto out;
        if (dyn) {
                r = dynamic_collect(f.elf, path, dyn, strscn, f.size, &info, d);
                if (r < 0)
                        goto out;
        }

        *ret = info;
        info = (struct elf_info){ 0 };
        r = 0;
out:
        r = elf_file_changed(&f, path, r, d);
        elf_info_release(&info);
        elf_file_close(&f);
        return r;
}

void elf_info_release(struct elf_info *info)
{
        if (!info)
                return;
        free(info->soname);
        free(info->runpath);
        free(info->rpath);
        strv_release(&info->needed);
        *info = (struct elf_info){ 0 };
}

static bool is_printable(unsigned char c)
{
        return c >= 0x20 && c <= 0x7e;
}

static bool ends_string(char c)
{
        return c == '\0' || c == '\n';
}

/* The search for NUL-terminated runs of printable bytes that start with
 * prefix, over a region read in chunks. A match is a maximal printable run
 * (the byte before it is not printable, or it starts the region) that
 * begins with prefix and ends at a NUL or a newline (the first line of a
 * text of several: nvcc's --version text is "Cuda compilation tools,
 * release 13.0, V13.0.88\nBuild cuda_13.0…"); it is kept cut at
 * FIND_STRINGS_MAX_LEN. What is carried from one chunk to the next: whether
 * the chunk starts inside a run that cannot match (skip) or inside a match
 * still open (cand, its head so far). */
struct string_search {
        const char *prefix;
        size_t plen;
        uint64_t budget;    /* bytes we may still copy: the file size */
        struct strv *found;
        enum { SEARCH_OUTSIDE, SEARCH_SKIP, SEARCH_CAND } state;
        bool start_ok;      /* a match may begin at the chunk's first byte */
        size_t cand_len;
        char cand[FIND_STRINGS_MAX_LEN];
};

static int search_keep(struct string_search *s, const char *str, size_t len)
{
        if (len > FIND_STRINGS_MAX_LEN)
                len = FIND_STRINGS_MAX_LEN;
        if (len + 1 + 2 * sizeof(char *) > s->budget)
                return -EBADMSG;
        s->budget -= len + 1 + 2 * sizeof(char *);
        strv_push(s->found, xstrndup(str, len));
        return 0;
}

/* Search buf[0, n), the next chunk of the region (the last when final).
 * Returns how many bytes at the end of buf must be carried to the front of
 * the next chunk (fewer than the prefix: the start of a prefix cut by the
 * chunk's end), or -EBADMSG when too many strings were found. */
static ssize_t search_chunk(struct string_search *s, const char *buf, size_t n, bool final)
{
        size_t p = 0;

        if (s->state == SEARCH_SKIP) {
                while (p < n && is_printable((unsigned char)buf[p]))
                        p++;
                if (p == n)
                        return 0;
                s->state = SEARCH_OUTSIDE;
        } else if (s->state == SEARCH_CAND) {
                for (; p < n && is_printable((unsigned char)buf[p]); p++)
                        if (s->cand_len < FIND_STRINGS_MAX_LEN)
                                s->cand[s->cand_len++] = buf[p];
                if (p == n)
                        return 0;
                s->state = SEARCH_OUTSIDE;
                if (ends_string(buf[p]) && search_keep(s, s->cand, s->cand_len) < 0)
                        return -EBADMSG;
        }

        while (p < n) {
                const char *q = memmem(buf + p, n - p, s->prefix, s->plen);
                size_t at, e;

                if (!q) {
                        /* A prefix may begin in the last plen - 1 bytes. */
                        size_t tail = n - p >= s->plen ? n - (s->plen - 1) : p;

                        if (final)
                                return 0;
                        s->start_ok = tail == 0 ? s->start_ok
                                                : !is_printable((unsigned char)buf[tail - 1]);
                        return (ssize_t)(n - tail);
                }
                at = (size_t)(q - buf);
                e = at;
                while (e < n && is_printable((unsigned char)buf[e]))
                        e++;
                if (at > 0 ? is_printable((unsigned char)buf[at - 1]) : !s->start_ok) {
                        /* Inside a run that began earlier: no match in it. */
                        if (e == n) {
                                s->state = SEARCH_SKIP;
                                return 0;
                        }
                        p = e;
                        continue;
                }
                if (e == n) {
                        s->state = SEARCH_CAND;
                        s->cand_len = e - at < FIND_STRINGS_MAX_LEN ? e - at : FIND_STRINGS_MAX_LEN;
                        memcpy(s->cand, q, s->cand_len);
                        return 0;
                }
                if (ends_string(buf[e]) && e - at >= s->plen && search_keep(s, q, e - at) < 0)
                        return -EBADMSG;
                p = e + (e == at);
        }
        return 0;
}

/* Search [off, off + size) of the file in chunks read with pread. A read
 * that comes back short means the file shrank: -ESTALE. */
static int search_region(const struct elf_file *f, const char *path, uint64_t off, uint64_t size,
                         struct string_search *s, struct diag *d)
{
        _cleanup_free_ char *buf = NULL;
        size_t carry = 0;
        uint64_t done = 0;

        if (off > f->size || size > f->size - off)
                return malformed(d, path, "a section (offset %" PRIu64 ", size %" PRIu64
                                 ") does not lie in the file", off, size);
        /* As large as the region when it is smaller than a chunk (the
         * .rodata of most files): a chunk's 256 KiB a search was an mmap
         * and munmap, or a heap top grown and trimmed, with page faults
         * each time. */
        buf = xmalloc((size < FIND_STRINGS_CHUNK ? (size_t)size : FIND_STRINGS_CHUNK) + FIND_STRINGS_MAX_LEN);
        s->state = SEARCH_OUTSIDE;
        s->start_ok = true;
        while (done < size) {
                size_t want = size - done < FIND_STRINGS_CHUNK ? (size_t)(size - done) : FIND_STRINGS_CHUNK;
                ssize_t keep;

                if (f->image)
                        memcpy(buf + carry, f->image + off + done, want);
                else {
                        int r = pread_exactly(f->fd, buf + carry, want, off + done, path, d);
                        if (r < 0)
                                return r;
                }
                done += want;
                keep = search_chunk(s, buf, carry + want, done == size);
                if (keep < 0)
                        return malformed(d, path, "too many strings starting with '%s'", s->prefix);
                memmove(buf, buf + carry + want - (size_t)keep, (size_t)keep);
                carry = (size_t)keep;
        }
        return 0;
}

/* Search the .rodata and .lrodata sections, or the whole file (when small
 * enough) if there are no section headers. */
static int find_strings_in(const struct elf_file *f, const char *path, const char *prefix,
                           struct strv *found, struct diag *d)
{
        struct string_search s = {
                .prefix = prefix, .plen = strlen(prefix), .budget = f->size, .found = found,
        };
        Elf_Scn *scn = NULL;
        size_t shnum, shstrndx;

        if (elf_getshdrnum(f->elf, &shnum) < 0)
                return malformed(d, path, "%s", libelf_error());

        if (shnum == 0) {
                if (f->size > FIND_STRINGS_WHOLE_FILE_MAX)
                        return 0;
                return search_region(f, path, 0, f->size, &s, d);
        }

        if (elf_getshdrstrndx(f->elf, &shstrndx) < 0)
                return malformed(d, path, "%s", libelf_error());
        while ((scn = elf_nextscn(f->elf, scn))) {
                const char *name;
                GElf_Shdr sh;
                int r;

                if (!gelf_getshdr(scn, &sh))
                        return malformed(d, path, "%s", libelf_error());
                if (sh.sh_type != SHT_PROGBITS)
                        continue;
                name = elf_strptr(f->elf, shstrndx, sh.sh_name);
                if (!name)
                        return malformed(d, path, "section %zu has no valid name: %s",
                                         elf_ndxscn(scn), libelf_error());
                if (!streq(name, ".rodata") && !streq(name, ".lrodata"))
                        continue;
                if (sh.sh_size == 0)
                        continue;
                r = search_region(f, path, sh.sh_offset, sh.sh_size, &s, d);
                if (r < 0)
                        return r;
        }
        return 0;
}

int elf_find_strings(int dirfd, const char *path, const char *prefix, struct strv *ret,
                     struct diag *d)
{
        struct elf_file f = ELF_FILE_INIT;
        struct strv found = { 0 };
        int r;

        if (!prefix || !*prefix)
                return diag_errorf(d, -EINVAL, "cannot search '%s' for an empty prefix", path);
        if (strlen(prefix) > FIND_STRINGS_MAX_LEN)
                return diag_errorf(d, -EINVAL, "cannot search '%s' for a prefix of more than %d bytes",
                                   path, FIND_STRINGS_MAX_LEN);

        r = elf_file_open(dirfd, path, &f, d);
        if (r < 0)
                return r;
        r = find_strings_in(&f, path, prefix, &found, d);
        r = elf_file_changed(&f, path, r, d);
        elf_file_close(&f);
        if (r < 0) {
                strv_release(&found);
                return r;
        }

        for (size_t i = 0; i < found.len; i++)
                strv_push(ret, TAKE_PTR(found.items[i]));
        found.len = 0;
        strv_release(&found);
        strv_sort_uniq(ret);
        return 0;
}

static const struct {
        unsigned machine;
        const char *arch;
} machine_arch[] = {
        { EM_X86_64, "x86_64" },
        { EM_AARCH64, "aarch64" },
        { EM_PPC64, "ppc64le" },
        { 0, NULL },
};

const char *elf_machine_to_arch(unsigned machine)
{
        for (size_t i = 0; machine_arch[i].arch; i++)
                if (machine_arch[i].machine == machine)
                        return machine_arch[i].arch;
        return NULL;
}

static const struct {
        const char *triple;
        unsigned machine;
} triple_machine[] = {
        { "x86_64-linux", EM_X86_64 },
        { "sbsa-linux", EM_AARCH64 },
        { "aarch64-linux", EM_AARCH64 },
        { "ppc64le-linux", EM_PPC64 },
        { NULL, 0 },
};

unsigned elf_machine_from_triple(const char *triple)
{
        if (!triple)
                return 0;
        for (size_t i = 0; triple_machine[i].triple; i++)
                if (streq(triple_machine[i].triple, triple))
                        return triple_machine[i].machine;
        return 0;
}
