/* elfstub.c: hand-written little-endian ELF shared objects for test trees.
 *
 * Layout (LAYOUTS.md section 6), one PT_LOAD mapping the whole file at
 * vaddr 0 so that every address in the file equals its offset:
 *
 *   ELF header | PT_LOAD, PT_DYNAMIC | .dynsym (the null symbol) | .dynstr |
 *   .rodata (markers, then pad zero bytes) | .dynamic | .shstrtab |
 *   section headers (null, .dynsym, .dynstr, .rodata, .dynamic, .shstrtab)
 *
 * Fields are written byte by byte in little-endian order, so the output does
 * not depend on the host; the constants are the ELF specification's. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfstub.h"
#include "banned.h"

enum {
        ET_DYN_ = 3,
        EM_386_ = 3,
        EM_PPC64_ = 21,
        PT_LOAD_ = 1,
        PT_DYNAMIC_ = 2,
        PF_W_ = 2,
        PF_R_ = 4,
        SHT_PROGBITS_ = 1,
        SHT_STRTAB_ = 3,
        SHT_DYNAMIC_ = 6,
        SHT_DYNSYM_ = 11,
        SHF_WRITE_ = 1,
        SHF_ALLOC_ = 2,
        DT_NULL_ = 0,
        DT_NEEDED_ = 1,
        DT_STRTAB_ = 5,
        DT_SYMTAB_ = 6,
        DT_STRSZ_ = 10,
        DT_SYMENT_ = 11,
        DT_SONAME_ = 14,
        DT_RPATH_ = 15,
        DT_RUNPATH_ = 29,
};

enum {
        SEC_NULL,
        SEC_DYNSYM,
        SEC_DYNSTR,
        SEC_RODATA,
        SEC_DYNAMIC,
        SEC_SHSTRTAB,
        SEC_COUNT,
};

static const char shstrtab[] = "\0.dynsym\0.dynstr\0.rodata\0.dynamic\0.shstrtab";
/* Offsets of the names in shstrtab, by section. */
static const uint32_t sec_name[SEC_COUNT] = { 0, 1, 9, 17, 25, 34 };

/* The sizes that differ between the two classes. */
struct elf_class_layout {
        size_t word;      /* Elf_Addr, Elf_Off, Elf_Xword, d_tag: 4 or 8 */
        size_t ehsize;
        size_t phentsize;
        size_t shentsize;
        size_t symsize;
        size_t dynsize;
};

static const struct elf_class_layout layout64 = { 8, 64, 56, 64, 24, 16 };
static const struct elf_class_layout layout32 = { 4, 52, 32, 40, 16, 8 };

struct image {
        unsigned char *buf;
        const struct elf_class_layout *l;
};

static void put16(struct image *im, size_t off, uint16_t v)
{
        im->buf[off] = (unsigned char)v;
        im->buf[off + 1] = (unsigned char)(v >> 8);
}

static void put32(struct image *im, size_t off, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                im->buf[off + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static void put64(struct image *im, size_t off, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                im->buf[off + (size_t)i] = (unsigned char)(v >> (8 * i));
}

/* An address, offset, size or d_tag: 4 bytes in ELF32, 8 in ELF64. */
static void putword(struct image *im, size_t off, uint64_t v)
{
        if (im->l->word == 8)
                put64(im, off, v);
        else
                put32(im, off, (uint32_t)v);
}

static void put_phdr(struct image *im, size_t off, uint32_t type, uint32_t flags, uint64_t offset,
                     uint64_t size, uint64_t align)
{
        if (im->l->word == 8) {
                put32(im, off, type);
                put32(im, off + 4, flags);
                put64(im, off + 8, offset);   /* p_offset */
                put64(im, off + 16, offset);  /* p_vaddr */
                put64(im, off + 24, offset);  /* p_paddr */
                put64(im, off + 32, size);    /* p_filesz */
                put64(im, off + 40, size);    /* p_memsz */
                put64(im, off + 48, align);
        } else {
                put32(im, off, type);
                put32(im, off + 4, (uint32_t)offset);
                put32(im, off + 8, (uint32_t)offset);
                put32(im, off + 12, (uint32_t)offset);
                put32(im, off + 16, (uint32_t)size);
                put32(im, off + 20, (uint32_t)size);
                put32(im, off + 24, flags);
                put32(im, off + 28, (uint32_t)align);
        }
}

struct shdr {
        uint32_t type;
        uint64_t flags;
        uint64_t offset;  /* also sh_addr for allocated sections */
        uint64_t size;
        uint32_t link;
        uint32_t info;
        uint64_t align;
        uint64_t entsize;
};

/* Elf64_Shdr and Elf32_Shdr share their order; only the word size differs. */
static void put_shdr(struct image *im, size_t off, uint32_t name, const struct shdr *sh)
{
        size_t w = im->l->word;

        put32(im, off, name);
        put32(im, off + 4, sh->type);
        putword(im, off + 8, sh->flags);
        putword(im, off + 8 + w, (sh->flags & SHF_ALLOC_) ? sh->offset : 0);
        putword(im, off + 8 + 2 * w, sh->offset);
        putword(im, off + 8 + 3 * w, sh->size);
        put32(im, off + 8 + 4 * w, sh->link);
        put32(im, off + 12 + 4 * w, sh->info);
        putword(im, off + 16 + 4 * w, sh->align);
        putword(im, off + 16 + 5 * w, sh->entsize);
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
        return (v + a - 1) / a * a;
}

static size_t strv_count(const char *const *v)
{
        size_t n = 0;

        while (v && v[n])
                n++;
        return n;
}

static int write_all(int fd, const unsigned char *buf, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, buf, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                buf += n;
                len -= (size_t)n;
        }
        return 0;
}

/* Write buf to dirfd/path through a temporary file in the same directory and
 * a rename, so a reader never sees half a stub. */
static int write_file_atomic(int dirfd, const char *path, const unsigned char *buf, size_t len)
{
        static unsigned counter;
        size_t plen = strlen(path);
        char *tmp;
        int fd = -1, r;

        tmp = malloc(plen + 64);
        if (!tmp)
                return -ENOMEM;
        for (int attempt = 0; attempt < 100; attempt++) {
                snprintf(tmp, plen + 64, "%s.tmp-%ld-%u", path, (long)getpid(), counter++);
                fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
                if (fd >= 0 || errno != EEXIST)
                        break;
        }
        if (fd < 0) {
                r = -errno;
                free(tmp);
                return r;
        }

        r = write_all(fd, buf, len);
        if (r == 0 && fchmod(fd, 0644) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && renameat(dirfd, tmp, dirfd, path) < 0)
                r = -errno;
        if (r < 0)
                (void)unlinkat(dirfd, tmp, 0);
        free(tmp);
        return r;
}

int elfstub_write(int dirfd, const char *path, const struct elfstub *s)
{
        const struct elf_class_layout *l = s->elf32 ? &layout32 : &layout64;
        size_t nneeded = strv_count(s->needed), nstrings = strv_count(s->strings);
        uint64_t off_ph, off_dynsym, off_dynstr, off_rodata, off_dynamic, off_shstrtab, off_sh;
        uint64_t dynstr_size = 1, rodata_size = s->pad, ndyn, total;
        size_t pos, soname_off = 0, runpath_off = 0;
        unsigned machine = s->machine ? s->machine : (s->elf32 ? EM_386_ : ELFSTUB_X86_64);
        struct image im = { .l = l };
        struct shdr sh[SEC_COUNT] = { { 0 } };
        size_t *needed_off;
        int r;

        if (!path)
                return -EINVAL;

        /* Sizes add up in 64 bits: strings already in memory plus an
         * unsigned pad cannot overflow that. */
        if (s->soname)
                dynstr_size += strlen(s->soname) + 1;
        for (size_t i = 0; i < nneeded; i++)
                dynstr_size += strlen(s->needed[i]) + 1;
        if (s->runpath)
                dynstr_size += strlen(s->runpath) + 1;
        for (size_t i = 0; i < nstrings; i++)
                rodata_size += strlen(s->strings[i]) + 1;
        ndyn = nneeded + (s->soname ? 1 : 0) + (s->runpath ? 1 : 0) + 5;

        off_ph = l->ehsize;
        off_dynsym = align_up(off_ph + 2 * l->phentsize, l->word);
        off_dynstr = off_dynsym + l->symsize;
        off_rodata = off_dynstr + dynstr_size;
        off_dynamic = align_up(off_rodata + rodata_size, l->word);
        off_shstrtab = off_dynamic + ndyn * l->dynsize;
        off_sh = align_up(off_shstrtab + sizeof(shstrtab), l->word);
        total = off_sh + SEC_COUNT * l->shentsize;
        if (total > SIZE_MAX || (s->elf32 && total > UINT32_MAX))
                return -EFBIG;

        im.buf = calloc(1, total);
        needed_off = calloc(nneeded ? nneeded : 1, sizeof(size_t));
        if (!im.buf || !needed_off) {
                free(im.buf);
                free(needed_off);
                return -ENOMEM;
        }

        /* ELF header. */
        memcpy(im.buf, "\177ELF", 4);
        im.buf[4] = s->elf32 ? 1 : 2;  /* EI_CLASS */
        im.buf[5] = 1;                 /* EI_DATA: little-endian */
        im.buf[6] = 1;                 /* EI_VERSION */
        put16(&im, 16, ET_DYN_);
        put16(&im, 18, (uint16_t)machine);
        put32(&im, 20, 1);                      /* e_version */
        putword(&im, 24, 0);                    /* e_entry */
        putword(&im, 24 + l->word, off_ph);     /* e_phoff */
        putword(&im, 24 + 2 * l->word, off_sh); /* e_shoff */
        /* e_flags: 64-bit PowerPC little-endian is ELFv2. */
        put32(&im, 24 + 3 * l->word, machine == EM_PPC64_ && !s->elf32 ? 2 : 0);
        put16(&im, 28 + 3 * l->word, (uint16_t)l->ehsize);
        put16(&im, 30 + 3 * l->word, (uint16_t)l->phentsize);
        put16(&im, 32 + 3 * l->word, 2);
        put16(&im, 34 + 3 * l->word, (uint16_t)l->shentsize);
        put16(&im, 36 + 3 * l->word, SEC_COUNT);
        put16(&im, 38 + 3 * l->word, SEC_SHSTRTAB);

        /* Program headers. */
        put_phdr(&im, off_ph, PT_LOAD_, PF_R_, 0, total, 0x1000);
        put_phdr(&im, off_ph + l->phentsize, PT_DYNAMIC_, PF_R_ | PF_W_, off_dynamic,
                 ndyn * l->dynsize, l->word);

        /* .dynsym holds only the null symbol, already zero. .dynstr: */
        pos = off_dynstr + 1;
        if (s->soname) {
                soname_off = pos - off_dynstr;
                memcpy(im.buf + pos, s->soname, strlen(s->soname) + 1);
                pos += strlen(s->soname) + 1;
        }
        for (size_t i = 0; i < nneeded; i++) {
                needed_off[i] = pos - off_dynstr;
                memcpy(im.buf + pos, s->needed[i], strlen(s->needed[i]) + 1);
                pos += strlen(s->needed[i]) + 1;
        }
        if (s->runpath) {
                runpath_off = pos - off_dynstr;
                memcpy(im.buf + pos, s->runpath, strlen(s->runpath) + 1);
                pos += strlen(s->runpath) + 1;
        }

        /* .rodata: the markers; the pad bytes are already zero. */
        pos = off_rodata;
        for (size_t i = 0; i < nstrings; i++) {
                memcpy(im.buf + pos, s->strings[i], strlen(s->strings[i]) + 1);
                pos += strlen(s->strings[i]) + 1;
        }

        /* .dynamic, in the order of LAYOUTS.md. */
        pos = off_dynamic;
#define DYN(tag, val)                                           \
        do {                                                    \
                putword(&im, pos, (tag));                       \
                putword(&im, pos + l->word, (val));             \
                pos += l->dynsize;                              \
        } while (0)
        for (size_t i = 0; i < nneeded; i++)
                DYN(DT_NEEDED_, needed_off[i]);
        if (s->soname)
                DYN(DT_SONAME_, soname_off);
        if (s->runpath)
                DYN(s->use_rpath ? DT_RPATH_ : DT_RUNPATH_, runpath_off);
        DYN(DT_STRTAB_, off_dynstr);
        DYN(DT_STRSZ_, dynstr_size);
        DYN(DT_SYMTAB_, off_dynsym);
        DYN(DT_SYMENT_, l->symsize);
        DYN(DT_NULL_, 0);
#undef DYN

        memcpy(im.buf + off_shstrtab, shstrtab, sizeof(shstrtab));

        /* Section headers; [SEC_NULL] stays zero. */
        sh[SEC_DYNSYM] = (struct shdr){ SHT_DYNSYM_, SHF_ALLOC_, off_dynsym, l->symsize,
                                        SEC_DYNSTR, 1, l->word, l->symsize };
        sh[SEC_DYNSTR] = (struct shdr){ SHT_STRTAB_, SHF_ALLOC_, off_dynstr, dynstr_size,
                                        0, 0, 1, 0 };
        sh[SEC_RODATA] = (struct shdr){ SHT_PROGBITS_, SHF_ALLOC_, off_rodata, rodata_size,
                                        0, 0, 1, 0 };
        sh[SEC_DYNAMIC] = (struct shdr){ SHT_DYNAMIC_, SHF_WRITE_ | SHF_ALLOC_, off_dynamic,
                                         ndyn * l->dynsize, SEC_DYNSTR, 0, l->word, l->dynsize };
        sh[SEC_SHSTRTAB] = (struct shdr){ SHT_STRTAB_, 0, off_shstrtab, sizeof(shstrtab),
                                          0, 0, 1, 0 };
        for (size_t i = 0; i < SEC_COUNT; i++)
                put_shdr(&im, off_sh + i * l->shentsize, sec_name[i], &sh[i]);

        r = write_file_atomic(dirfd, path, im.buf, total);
        free(needed_off);
        free(im.buf);
        return r;
}
