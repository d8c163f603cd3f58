/* test-elf.c: the ELF reader against hand-written stubs, damaged stubs and,
 * when installed, real CUDA libraries. */
#include <check.h>

#include "testutil.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "elf-file.h"
#include "elfstub.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

#define REAL_CUDA_LIB "/usr/local/cuda-13.0/lib"

/* Each test gets a fresh directory (checked fixture, in the test's process)
 * inside a per-case base directory (unchecked fixture, in the runner), so
 * that even a test that fails in fork mode, where its own teardown never
 * runs, leaves nothing behind. */
static char *base_dir;
static char *tmp_dir;
static int tmp_fd = -1;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path);
}

static void rm_rf(const char *dir)
{
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void basedir_setup(void)
{
        const char *t = getenv("TMPDIR");

        base_dir = xasprintf("%s/cudamod-test-elf.XXXXXX", t && *t ? t : "/tmp");
        ck_assert_ptr_nonnull(mkdtemp(base_dir));
}

static void basedir_teardown(void)
{
        rm_rf(base_dir);
        free(base_dir);
        base_dir = NULL;
}

static void tmpdir_setup(void)
{
        tmp_dir = xasprintf("%s/test.XXXXXX", base_dir);
        ck_assert_ptr_nonnull(mkdtemp(tmp_dir));
        tmp_fd = open(tmp_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(tmp_fd, 0);
}

static void tmpdir_teardown(void)
{
        if (tmp_fd >= 0)
                close(tmp_fd);
        tmp_fd = -1;
        rm_rf(tmp_dir);
        free(tmp_dir);
        tmp_dir = NULL;
}

/* Both fixtures, for a test case that writes files. */
static void tcase_add_tmpdir(TCase *tc)
{
        tcase_add_unchecked_fixture(tc, basedir_setup, basedir_teardown);
        tcase_add_checked_fixture(tc, tmpdir_setup, tmpdir_teardown);
}

static const char *const default_needed[] = { "libcublasLt.so.12", "libc.so.6", NULL };
static const char *const default_strings[] = {
        "NCCL version 2.21.5+cuda12.4",
        "libcublasLt.so.12",
        "libnvrtc.so.12",
        "Cuda compilation tools, release 12.4, V12.4.99",
        NULL,
};

static const struct elfstub default_stub = {
        .soname = "libcublas.so.12",
        .needed = default_needed,
        .runpath = "$ORIGIN",
        .strings = default_strings,
        .pad = 13,
};

static void write_stub(const char *name, const struct elfstub *s)
{
        ck_assert_int_eq(elfstub_write(tmp_fd, name, s), 0);
}

static void write_bytes(const char *name, const void *buf, size_t len)
{
        int fd = openat(tmp_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
        ck_assert_int_eq(close(fd), 0);
}

static void read_bytes(const char *name, struct strbuf *sb)
{
        ck_assert_int_eq(strbuf_read_fileat(sb, tmp_fd, name, 64 << 20), 0);
}

/* Little-endian field access for poking at a stub (ELF64 unless noted). */
static uint64_t get_le(const struct strbuf *sb, size_t off, size_t n)
{
        uint64_t v = 0;

        ck_assert_uint_le(off + n, sb->len);
        for (size_t i = 0; i < n; i++)
                v |= (uint64_t)(unsigned char)sb->buf[off + i] << (8 * i);
        return v;
}

static void put_le(struct strbuf *sb, size_t off, size_t n, uint64_t v)
{
        ck_assert_uint_le(off + n, sb->len);
        for (size_t i = 0; i < n; i++)
                sb->buf[off + i] = (char)(v >> (8 * i));
}

enum { SHDR_NAME = 0, SHDR_TYPE = 4, SHDR_OFFSET = 24, SHDR_SIZE = 32, SHDR_LINK = 40 };
enum { PHDR_TYPE = 0, PHDR_OFFSET = 8, PHDR_FILESZ = 32 };
enum { SHT_PROGBITS_ = 1, SHT_STRTAB_ = 3, SHT_DYNAMIC_ = 6, PT_DYNAMIC_ = 2 };
enum { DT_NEEDED_ = 1, DT_STRTAB_ = 5, DT_STRSZ_ = 10, DT_SONAME_ = 14, DT_RUNPATH_ = 29 };

static size_t shdr_at(const struct strbuf *sb, size_t i)
{
        return get_le(sb, 40, 8) + i * 64;
}

/* The header offset of the first section of the given type. */
static size_t shdr_of_type(const struct strbuf *sb, uint32_t type)
{
        size_t n = get_le(sb, 60, 2);

        for (size_t i = 1; i < n; i++)
                if (get_le(sb, shdr_at(sb, i) + SHDR_TYPE, 4) == type)
                        return shdr_at(sb, i);
        ck_abort_msg("no section of type %u", type);
        return 0;
}

static size_t phdr_of_type(const struct strbuf *sb, uint32_t type)
{
        size_t phoff = get_le(sb, 32, 8), n = get_le(sb, 56, 2);

        for (size_t i = 0; i < n; i++)
                if (get_le(sb, phoff + i * 56 + PHDR_TYPE, 4) == type)
                        return phoff + i * 56;
        ck_abort_msg("no program header of type %u", type);
        return 0;
}

/* The offset of the value of the nth (0-based) dynamic entry with tag. */
static size_t dyn_val(const struct strbuf *sb, uint64_t tag, unsigned nth)
{
        size_t dyn = get_le(sb, phdr_of_type(sb, PT_DYNAMIC_) + PHDR_OFFSET, 8);

        for (size_t p = dyn; p + 16 <= sb->len; p += 16) {
                uint64_t t = get_le(sb, p, 8);

                if (t == 0)
                        break;
                if (t == tag && nth-- == 0)
                        return p + 8;
        }
        ck_abort_msg("no dynamic entry %ju", (uintmax_t)tag);
        return 0;
}

/* Drop the section header table: only the program headers remain. */
static void strip_sections(struct strbuf *sb)
{
        put_le(sb, 40, 8, 0);
        put_le(sb, 58, 2, 0);
        put_le(sb, 60, 2, 0);
        put_le(sb, 62, 2, 0);
}

/* Read name; r is the expected result. On success the info is checked by
 * the caller and must be released; on failure the output is untouched and
 * the diag says something. */
static int read_info(const char *name, struct elf_info *info)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        int r;

        *info = (struct elf_info){ .machine = 4242 };
        r = elf_read_info(tmp_fd, name, info, &d);
        if (r < 0) {
                ck_assert_uint_eq(info->machine, 4242);
                ck_assert_ptr_null(info->soname);
                ck_assert_ptr_nonnull(d.message);
                ck_assert_ptr_nonnull(strstr(d.message, name));
        } else {
                ck_assert_int_eq(r, 0);
                ck_assert_ptr_null(d.message);
        }
        return r;
}

START_TEST(elf_reads_soname_needed_runpath)
{
        struct elf_info info;

        write_stub("libcublas.so.12", &default_stub);
        ck_assert_int_eq(read_info("libcublas.so.12", &info), 0);
        ck_assert_uint_eq(info.elf_class, 64);
        ck_assert_uint_eq(info.machine, 62);
        ck_assert(info.little_endian);
        ck_assert_uint_eq(info.type, 3);
        ck_assert_str_eq(info.soname, "libcublas.so.12");
        ck_assert_uint_eq(info.needed.len, 2);
        ck_assert_str_eq(info.needed.items[0], "libcublasLt.so.12");
        ck_assert_str_eq(info.needed.items[1], "libc.so.6");
        ck_assert_ptr_null(info.needed.items[2]);
        ck_assert_str_eq(info.runpath, "$ORIGIN");
        ck_assert_ptr_null(info.rpath);
        elf_info_release(&info);
        ck_assert_ptr_null(info.soname);
}
END_TEST

START_TEST(elf_reads_rpath_for_conda_style)
{
        static const char *const needed[] = { "libcudart.so.12", NULL };
        const struct elfstub s = {
                .soname = "libcudnn.so.8",
                .needed = needed,
                .runpath = "$ORIGIN/../lib:/opt/conda/lib",
                .use_rpath = true,
        };
        struct elf_info info;

        write_stub("libcudnn.so.8", &s);
        ck_assert_int_eq(read_info("libcudnn.so.8", &info), 0);
        ck_assert_str_eq(info.rpath, "$ORIGIN/../lib:/opt/conda/lib");
        ck_assert_ptr_null(info.runpath);
        ck_assert_uint_eq(info.needed.len, 1);
        ck_assert_str_eq(info.needed.items[0], "libcudart.so.12");
        elf_info_release(&info);
}
END_TEST

START_TEST(elf_without_dynamic_strings_has_no_soname)
{
        const struct elfstub s = { 0 };
        struct elf_info info;

        write_stub("libempty.so", &s);
        ck_assert_int_eq(read_info("libempty.so", &info), 0);
        ck_assert_ptr_null(info.soname);
        ck_assert_ptr_null(info.runpath);
        ck_assert_ptr_null(info.rpath);
        ck_assert_uint_eq(info.needed.len, 0);
        elf_info_release(&info);
}
END_TEST

START_TEST(elf_without_dynamic_section_is_success)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        struct elf_info info;

        write_stub("libstatic.so", &default_stub);
        read_bytes("libstatic.so", &sb);
        put_le(&sb, shdr_of_type(&sb, SHT_DYNAMIC_) + SHDR_TYPE, 4, SHT_PROGBITS_);
        put_le(&sb, phdr_of_type(&sb, PT_DYNAMIC_) + PHDR_TYPE, 4, 0);
        write_bytes("libstatic.so", sb.buf, sb.len);
        ck_assert_int_eq(read_info("libstatic.so", &info), 0);
        ck_assert_uint_eq(info.elf_class, 64);
        ck_assert_ptr_null(info.soname);
        ck_assert_uint_eq(info.needed.len, 0);
        elf_info_release(&info);
}
END_TEST

static const struct {
        unsigned machine;
        unsigned expect;
        const char *arch;
} machine_cases[] = {
        { 0, 62, "x86_64" },
        { ELFSTUB_X86_64, 62, "x86_64" },
        { ELFSTUB_AARCH64, 183, "aarch64" },
        { ELFSTUB_PPC64, 21, "ppc64le" },
        { 0, 0, NULL },
};

START_TEST(elf_stub_machine_is_read_back)
{
        for (size_t i = 0; machine_cases[i].arch; i++) {
                struct elfstub s = default_stub;
                struct elf_info info;

                s.machine = machine_cases[i].machine;
                write_stub("libm.so", &s);
                ck_assert_int_eq(read_info("libm.so", &info), 0);
                ck_assert_uint_eq(info.machine, machine_cases[i].expect);
                ck_assert_str_eq(elf_machine_to_arch(info.machine), machine_cases[i].arch);
                ck_assert_str_eq(info.soname, "libcublas.so.12");
                elf_info_release(&info);
        }
}
END_TEST

START_TEST(elf_aarch64_machine)
{
        struct elfstub s = default_stub;
        struct elf_info info;

        s.machine = ELFSTUB_AARCH64;
        write_stub("libcudart.so.12", &s);
        ck_assert_int_eq(read_info("libcudart.so.12", &info), 0);
        ck_assert_uint_eq(info.machine, 183);
        ck_assert_uint_eq(info.machine, elf_machine_from_triple("sbsa-linux"));
        elf_info_release(&info);
}
END_TEST

START_TEST(elf32_is_reported_as_class_32)
{
        struct elfstub s = default_stub;
        struct elf_info info;

        s.elf32 = true;
        write_stub("libcudart.so.12", &s);
        ck_assert_int_eq(read_info("libcudart.so.12", &info), 0);
        ck_assert_uint_eq(info.elf_class, 32);
        ck_assert_uint_eq(info.machine, 3);
        ck_assert(info.little_endian);
        ck_assert_uint_eq(info.type, 3);
        ck_assert_str_eq(info.soname, "libcublas.so.12");
        ck_assert_uint_eq(info.needed.len, 2);
        ck_assert_str_eq(info.runpath, "$ORIGIN");
        elf_info_release(&info);
}
END_TEST

START_TEST(non_elf_file_is_enoexec)
{
        static const char text[] = "/* GNU ld script */\nINPUT(libcudart.so.12.4.127)\n";
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct elf_info info = { .machine = 4242 };
        struct strv found = { 0 };

        write_bytes("libcudart.so.12", text, sizeof(text) - 1);
        ck_assert_int_eq(elf_read_info(tmp_fd, "libcudart.so.12", &info, &d), -ENOEXEC);
        ck_assert_str_eq(d.message, "'libcudart.so.12' is not an ELF file");
        ck_assert_uint_eq(info.machine, 4242);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libcudart.so.12", "lib", &found, &d), -ENOEXEC);
        ck_assert_uint_eq(found.len, 0);
}
END_TEST

START_TEST(static_archive_is_enoexec)
{
        static const char ar[] = "!<arch>\n/               0           0     0     0       4         `\n";
        struct elf_info info;

        write_bytes("libcudart_static.a", ar, sizeof(ar) - 1);
        ck_assert_int_eq(read_info("libcudart_static.a", &info), -ENOEXEC);
}
END_TEST

START_TEST(empty_file_is_enoexec)
{
        struct elf_info info;

        write_bytes("libempty.so.1", "", 0);
        ck_assert_int_eq(read_info("libempty.so.1", &info), -ENOEXEC);
}
END_TEST

START_TEST(missing_file_is_enoent)
{
        struct elf_info info;
        struct strv found = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        ck_assert_int_eq(read_info("libnothere.so", &info), -ENOENT);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnothere.so", "x", &found, &d), -ENOENT);
        ck_assert_ptr_nonnull(strstr(d.message, "'libnothere.so'"));
}
END_TEST

START_TEST(directory_and_fifo_are_errors)
{
        struct elf_info info;

        ck_assert_int_eq(mkdirat(tmp_fd, "libdir.so", 0755), 0);
        ck_assert_int_eq(read_info("libdir.so", &info), -EISDIR);
        /* A FIFO must not block the reader. */
        ck_assert_int_eq(mkfifoat(tmp_fd, "libfifo.so", 0644), 0);
        ck_assert_int_eq(read_info("libfifo.so", &info), -ENOEXEC);
}
END_TEST

START_TEST(elf_reads_relative_to_dirfd_and_absolute)
{
        _cleanup_free_ char *abs = NULL;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct elf_info info;

        write_stub("libcublas.so.12", &default_stub);
        abs = path_join(tmp_dir, "libcublas.so.12");
        ck_assert_int_eq(elf_read_info(AT_FDCWD, abs, &info, &d), 0);
        ck_assert_str_eq(info.soname, "libcublas.so.12");
        elf_info_release(&info);
}
END_TEST

/* Read a file that may be anything, through both entry points; a failure
 * must come with a message, a success must release cleanly. */
static void read_anything(const char *name)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };
        struct elf_info info;
        int r;

        r = elf_read_info(tmp_fd, name, &info, &d);
        if (r == 0)
                elf_info_release(&info);
        else
                ck_assert_ptr_nonnull(d.message);
        diag_release(&d);
        r = elf_find_strings(tmp_fd, name, "NCCL version", &found, &d);
        if (r < 0)
                ck_assert_ptr_nonnull(d.message);
        strv_release(&found);
}

static void truncate_at_every_length(const struct elfstub *s, bool stripped)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        struct elf_info info;

        write_stub("libfull.so", s);
        read_bytes("libfull.so", &sb);
        if (stripped)
                strip_sections(&sb);
        for (size_t len = 0; len < sb.len; len++) {
                int r;

                write_bytes("libcut.so", sb.buf, len);
                read_anything("libcut.so");
                r = read_info("libcut.so", &info);
                if (len < 16)
                        ck_assert_int_eq(r, -ENOEXEC);
                if (r == 0)
                        elf_info_release(&info);
                else
                        ck_assert(r == -ENOEXEC || r == -EBADMSG);
        }
}

START_TEST(truncated_stub_at_every_length_fails_cleanly)
{
        struct elfstub s32 = default_stub;

        s32.elf32 = true;
        truncate_at_every_length(&default_stub, false);
        truncate_at_every_length(&s32, false);
}
END_TEST

START_TEST(truncated_sectionless_stub_fails_cleanly)
{
        truncate_at_every_length(&default_stub, true);
}
END_TEST

START_TEST(every_byte_overwritten_never_crashes)
{
        static const unsigned char values[] = { 0x00, 0xff, 0x7f, 0x80 };
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        write_stub("libgood.so", &default_stub);
        read_bytes("libgood.so", &sb);
        for (size_t i = 0; i < sb.len; i++) {
                char orig = sb.buf[i];

                for (size_t v = 0; v < ELEMENTSOF(values); v++) {
                        sb.buf[i] = (char)values[v];
                        write_bytes("libbad.so", sb.buf, sb.len);
                        read_anything("libbad.so");
                }
                sb.buf[i] = orig;
        }
}
END_TEST

START_TEST(random_damage_never_crashes)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        uint32_t seed = 0x12345678;

        write_stub("libgood.so", &default_stub);
        read_bytes("libgood.so", &sb);
        for (int round = 0; round < 300; round++) {
                _cleanup_free_ char *copy = xmalloc(sb.len);

                memcpy(copy, sb.buf, sb.len);
                if (round % 2) {
                        /* Half the rounds go through PT_DYNAMIC: no e_shoff,
                         * e_shentsize, e_shnum, e_shstrndx. */
                        memset(copy + 40, 0, 8);
                        memset(copy + 58, 0, 6);
                }
                for (int k = 0; k < 1 + round % 8; k++) {
                        seed = seed * 1103515245u + 12345u;
                        copy[(seed >> 8) % sb.len] = (char)(seed >> 24);
                }
                write_bytes("libbad.so", copy, sb.len);
                read_anything("libbad.so");
        }
}
END_TEST

/* Damage to one field of the stub that the reader must report as
 * -EBADMSG. */
struct corruption {
        const char *name;
        bool stripped;  /* apply after dropping the section headers */
        void (*apply)(struct strbuf *sb);
};

static void soname_offset_far_beyond(struct strbuf *sb)
{
        put_le(sb, dyn_val(sb, DT_SONAME_, 0), 8, 0xffffffffffffull);
}

static void needed_offset_just_past_table(struct strbuf *sb)
{
        size_t dynstr = shdr_of_type(sb, SHT_STRTAB_);

        put_le(sb, dyn_val(sb, DT_NEEDED_, 1), 8, get_le(sb, dynstr + SHDR_SIZE, 8));
}

static void dynstr_last_string_unterminated(struct strbuf *sb)
{
        size_t dynstr = shdr_of_type(sb, SHT_STRTAB_);

        put_le(sb, dynstr + SHDR_SIZE, 8, get_le(sb, dynstr + SHDR_SIZE, 8) - 1);
}

static void dynamic_links_to_progbits(struct strbuf *sb)
{
        size_t dyn = shdr_of_type(sb, SHT_DYNAMIC_), rodata = shdr_of_type(sb, SHT_PROGBITS_);

        put_le(sb, dyn + SHDR_LINK, 4, (rodata - shdr_at(sb, 0)) / 64);
}

static void dynamic_links_to_missing_section(struct strbuf *sb)
{
        put_le(sb, shdr_of_type(sb, SHT_DYNAMIC_) + SHDR_LINK, 4, 99);
}

static void dynamic_links_to_null_section(struct strbuf *sb)
{
        put_le(sb, shdr_of_type(sb, SHT_DYNAMIC_) + SHDR_LINK, 4, 0);
}

static void dynamic_offset_beyond_end(struct strbuf *sb)
{
        put_le(sb, shdr_of_type(sb, SHT_DYNAMIC_) + SHDR_OFFSET, 8, 0x7fffffff0000ull);
}

static void dynamic_size_huge(struct strbuf *sb)
{
        put_le(sb, shdr_of_type(sb, SHT_DYNAMIC_) + SHDR_SIZE, 8, 0xfffffffffff0ull);
}

static void dynstr_offset_beyond_end(struct strbuf *sb)
{
        put_le(sb, shdr_of_type(sb, SHT_STRTAB_) + SHDR_OFFSET, 8, sb->len + 1);
}

static void section_table_beyond_end(struct strbuf *sb)
{
        put_le(sb, 40, 8, sb->len - 10);
}

static void strtab_address_outside_load(struct strbuf *sb)
{
        put_le(sb, dyn_val(sb, DT_STRTAB_, 0), 8, 0x40000000);
}

static void strsz_huge(struct strbuf *sb)
{
        put_le(sb, dyn_val(sb, DT_STRSZ_, 0), 8, 0xffffffffffffull);
}

static void strsz_cuts_runpath(struct strbuf *sb)
{
        size_t v = dyn_val(sb, DT_STRSZ_, 0);

        put_le(sb, v, 8, get_le(sb, v, 8) - 1);
}

static void runpath_offset_beyond_strsz(struct strbuf *sb)
{
        put_le(sb, dyn_val(sb, DT_RUNPATH_, 0), 8, 0x10000);
}

static void pt_dynamic_beyond_end(struct strbuf *sb)
{
        put_le(sb, phdr_of_type(sb, PT_DYNAMIC_) + PHDR_OFFSET, 8, 0x7fffffff0000ull);
}

static void pt_dynamic_size_huge(struct strbuf *sb)
{
        put_le(sb, phdr_of_type(sb, PT_DYNAMIC_) + PHDR_FILESZ, 8, 0xffffffffffffull);
}

static void program_headers_beyond_end(struct strbuf *sb)
{
        put_le(sb, 32, 8, sb->len + 4096);
}

static void program_header_count_absurd(struct strbuf *sb)
{
        put_le(sb, 56, 2, 0xfffe);
}

static void no_strtab(struct strbuf *sb)
{
        /* No DT_STRTAB at all: turn it into DT_SYMTAB. */
        put_le(sb, dyn_val(sb, DT_STRTAB_, 0) - 8, 8, 6);
}

static const struct corruption corruptions[] = {
        { "soname offset far beyond .dynstr", false, soname_offset_far_beyond },
        { "needed offset just past .dynstr", false, needed_offset_just_past_table },
        { "last .dynstr string unterminated", false, dynstr_last_string_unterminated },
        { ".dynamic links to .rodata", false, dynamic_links_to_progbits },
        { ".dynamic links to section 99", false, dynamic_links_to_missing_section },
        { ".dynamic links to section 0", false, dynamic_links_to_null_section },
        { ".dynamic offset beyond end", false, dynamic_offset_beyond_end },
        { ".dynamic size huge", false, dynamic_size_huge },
        { ".dynstr offset beyond end", false, dynstr_offset_beyond_end },
        { "section table beyond end", false, section_table_beyond_end },
        { "soname offset far beyond DT_STRSZ", true, soname_offset_far_beyond },
        { "DT_STRTAB outside PT_LOAD", true, strtab_address_outside_load },
        { "DT_STRSZ huge", true, strsz_huge },
        { "DT_STRSZ cuts the last string", true, strsz_cuts_runpath },
        { "runpath offset beyond DT_STRSZ", true, runpath_offset_beyond_strsz },
        { "PT_DYNAMIC beyond end", true, pt_dynamic_beyond_end },
        { "PT_DYNAMIC size huge", true, pt_dynamic_size_huge },
        { "program headers beyond end", true, program_headers_beyond_end },
        { "program header count absurd", true, program_header_count_absurd },
        { "no DT_STRTAB", true, no_strtab },
        { NULL, false, NULL },
};

START_TEST(corrupted_dynamic_offsets_are_ebadmsg)
{
        for (size_t i = 0; corruptions[i].name; i++) {
                _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
                struct elf_info info;
                int r;

                write_stub("libgood.so", &default_stub);
                read_bytes("libgood.so", &sb);
                if (corruptions[i].stripped)
                        strip_sections(&sb);
                corruptions[i].apply(&sb);
                write_bytes("libbad.so", sb.buf, sb.len);
                r = read_info("libbad.so", &info);
                if (r == 0)
                        elf_info_release(&info);
                ck_assert_msg(r == -EBADMSG, "%s: got %d (%s), expected -EBADMSG",
                              corruptions[i].name, r, strerror(-r));
                read_anything("libbad.so");
        }
}
END_TEST

START_TEST(repeated_long_needed_strings_are_bounded)
{
        static const char *needed[201];
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_free_ char *longpath = xmalloc(4001);
        struct elfstub s = { .soname = "libx.so", .needed = needed };
        size_t runpath;
        struct elf_info info;

        memset(longpath, 'a', 4000);
        longpath[4000] = '\0';
        for (size_t i = 0; i < 200; i++)
                needed[i] = "l";
        needed[200] = NULL;
        s.runpath = longpath;
        write_stub("libx.so", &s);
        read_bytes("libx.so", &sb);
        /* Point all 200 DT_NEEDED at the 4000-byte run path: 800 kB of
         * strings from a file of a few kB. */
        runpath = get_le(&sb, dyn_val(&sb, DT_RUNPATH_, 0), 8);
        for (unsigned i = 0; i < 200; i++)
                put_le(&sb, dyn_val(&sb, DT_NEEDED_, i), 8, runpath);
        write_bytes("libx.so", sb.buf, sb.len);
        ck_assert_int_eq(read_info("libx.so", &info), -EBADMSG);
}
END_TEST

START_TEST(elf_without_section_headers_reads_pt_dynamic)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };
        struct elf_info info;

        write_stub("libsstrip.so", &default_stub);
        read_bytes("libsstrip.so", &sb);
        strip_sections(&sb);
        write_bytes("libsstrip.so", sb.buf, sb.len);
        ck_assert_int_eq(read_info("libsstrip.so", &info), 0);
        ck_assert_str_eq(info.soname, "libcublas.so.12");
        ck_assert_uint_eq(info.needed.len, 2);
        ck_assert_str_eq(info.needed.items[0], "libcublasLt.so.12");
        ck_assert_str_eq(info.needed.items[1], "libc.so.6");
        ck_assert_str_eq(info.runpath, "$ORIGIN");
        elf_info_release(&info);

        /* Without sections the whole file is searched. */
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libsstrip.so", "NCCL version ", &found, &d), 0);
        ck_assert_uint_eq(found.len, 1);
        ck_assert_str_eq(found.items[0], "NCCL version 2.21.5+cuda12.4");
        strv_release(&found);
}
END_TEST

START_TEST(elf_find_strings_finds_markers)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };

        write_stub("libnccl.so.2", &default_stub);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", "NCCL version ", &found, &d), 0);
        ck_assert_uint_eq(found.len, 1);
        ck_assert_str_eq(found.items[0], "NCCL version 2.21.5+cuda12.4");
        strv_release(&found);

        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", "Cuda compilation", &found, &d), 0);
        ck_assert_uint_eq(found.len, 1);
        ck_assert_str_eq(found.items[0], "Cuda compilation tools, release 12.4, V12.4.99");
        strv_release(&found);

        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", "cuDNN", &found, &d), 0);
        ck_assert_uint_eq(found.len, 0);
        ck_assert_ptr_null(d.message);
        strv_release(&found);
}
END_TEST

START_TEST(elf_find_strings_ignores_strings_outside_rodata)
{
        static const char *const needed[] = { "libcublasLt.so.11", NULL };
        static const char *const strings[] = { "libcublasLt.so.12", NULL };
        const struct elfstub s = { .soname = "libcublasLt.so.10", .needed = needed,
                                   .strings = strings };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };

        write_stub("libcudnn.so.9", &s);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libcudnn.so.9", "libcublasLt.so.", &found, &d), 0);
        ck_assert_uint_eq(found.len, 1);
        ck_assert_str_eq(found.items[0], "libcublasLt.so.12");
        strv_release(&found);
}
END_TEST

START_TEST(elf_find_strings_reads_lrodata_but_not_other_sections)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };
        size_t rodata, shstrtab, name;

        write_stub("libnccl.so.2", &default_stub);
        read_bytes("libnccl.so.2", &sb);
        rodata = shdr_of_type(&sb, SHT_PROGBITS_);
        shstrtab = shdr_at(&sb, get_le(&sb, 62, 2));

        /* Rename .rodata to .dynamic: not searched. */
        put_le(&sb, rodata + SHDR_NAME, 4,
               get_le(&sb, shdr_of_type(&sb, SHT_DYNAMIC_) + SHDR_NAME, 4));
        write_bytes("libnccl.so.2", sb.buf, sb.len);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", "NCCL", &found, &d), 0);
        ck_assert_uint_eq(found.len, 0);

        /* Rewrite the name ".shstrtab" as ".lrodata" and give it to .rodata. */
        name = get_le(&sb, shstrtab + SHDR_NAME, 4);
        memcpy(sb.buf + get_le(&sb, shstrtab + SHDR_OFFSET, 8) + name, ".lrodata", 9);
        put_le(&sb, rodata + SHDR_NAME, 4, name);
        write_bytes("libnccl.so.2", sb.buf, sb.len);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", "NCCL", &found, &d), 0);
        ck_assert_uint_eq(found.len, 1);
        ck_assert_str_eq(found.items[0], "NCCL version 2.21.5+cuda12.4");
        strv_release(&found);
}
END_TEST

START_TEST(elf_find_strings_sorts_dedups_and_appends)
{
        static const char *const strings[] = {
                "libnvrtc.so.12", "libcublasLt.so.12", "libnvrtc.so.12", "Mismatched libfoo",
                "libbad\001", "libtab\tx", NULL,
        };
        const struct elfstub s = { .strings = strings, .pad = 1 << 20 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };

        strv_add(&found, "zzz");
        strv_add(&found, "libnvrtc.so.12");
        write_stub("libcudnn_graph.so.9", &s);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libcudnn_graph.so.9", "lib", &found, &d), 0);
        /* Not "libfoo" (inside a longer string), nor the strings with a
         * control character. */
        ck_assert_uint_eq(found.len, 3);
        ck_assert_str_eq(found.items[0], "libcublasLt.so.12");
        ck_assert_str_eq(found.items[1], "libnvrtc.so.12");
        ck_assert_str_eq(found.items[2], "zzz");
        ck_assert_ptr_null(found.items[3]);
        strv_release(&found);
}
END_TEST

/* nvcc's version text is one string of several lines: its first line is
 * found (real nvcc of 11.8 and 13.0: "...V13.0.88\nBuild cuda_13.0..."),
 * and a run ending at another control character still is not. */
START_TEST(elf_find_strings_takes_the_first_line_of_a_text)
{
        static const char *const strings[] = {
                "Cuda compilation tools, release 11.8, V11.8.89\nBuild cuda_11.8.r11.8/compiler.31833905_0",
                "Cuda compilation tools, release 9.9\tx", NULL,
        };
        const struct elfstub s = { .strings = strings };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };

        write_stub("nvcc", &s);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "nvcc", "Cuda compilation tools, release ", &found, &d), 0);
        ck_assert_uint_eq(found.len, 1);
        ck_assert_str_eq(found.items[0], "Cuda compilation tools, release 11.8, V11.8.89");
        strv_release(&found);
}
END_TEST

START_TEST(elf_find_strings_cuts_long_strings)
{
        _cleanup_free_ char *longs = xmalloc(301);
        const char *strings[] = { longs, NULL };
        const struct elfstub s = { .strings = strings };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };

        memcpy(longs, "NCCL version ", 13);
        memset(longs + 13, 'x', 300 - 13);
        longs[300] = '\0';
        write_stub("libnccl.so.2", &s);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", "NCCL version ", &found, &d), 0);
        ck_assert_uint_eq(found.len, 1);
        ck_assert_uint_eq(strlen(found.items[0]), 256);
        ck_assert_mem_eq(found.items[0], longs, 256);
        strv_release(&found);
}
END_TEST

/* .rodata is read in 256 KiB chunks: a string cut by a chunk's end, a
 * long one that runs into the next chunk and a prefix inside a longer run
 * that crosses it are found (or not) exactly as in one piece. */
START_TEST(elf_find_strings_across_read_chunks)
{
        static const size_t chunk = 256 << 10;
        static const size_t before[] = { 300, 200, 14, 13, 12, 7, 1, 0 };
        static const char prefix[] = "NCCL version ";

        for (size_t b = 1; b <= 2; b++)
                for (size_t i = 0; i < ELEMENTSOF(before) + 1; i++) {
                        /* The string starts at k within .rodata (i past the table: k after the boundary). */
                        size_t k = i < ELEMENTSOF(before) ? b * chunk - before[i] : b * chunk + 1;
                        _cleanup_free_ char *filler = xmalloc(k + 64), *longs = xmalloc(320);
                        _cleanup_diag_ struct diag d = DIAG_INIT;
                        struct strv found = { 0 };

                        memset(filler, 'y', k - 1);
                        filler[k - 1] = '\0';
                        memcpy(longs, prefix, strlen(prefix));
                        memset(longs + strlen(prefix), 'x', 300);
                        longs[strlen(prefix) + 300] = '\0';

                        /* Whole, at k. */
                        write_stub("libnccl.so.2", &(struct elfstub){
                                .strings = (const char *const[]){ filler, "NCCL version 2.1+cuda12.0", NULL } });
                        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", prefix, &found, &d), 0);
                        ck_assert_msg(found.len == 1 && streq(found.items[0], "NCCL version 2.1+cuda12.0"),
                                      "k %zu: %zu found", k, found.len);
                        strv_release(&found);

                        /* Long, from k into the next chunk: cut at 256. */
                        write_stub("libnccl.so.2", &(struct elfstub){
                                .strings = (const char *const[]){ filler, longs, NULL } });
                        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", prefix, &found, &d), 0);
                        ck_assert_msg(found.len == 1 && strlen(found.items[0]) == 256 &&
                                      memcmp(found.items[0], longs, 256) == 0, "k %zu: %zu found", k, found.len);
                        strv_release(&found);

                        /* Inside a run that began before: no match. */
                        filler[k - 1] = 'y';
                        memcpy(filler + k, "NCCL version 9", 15);
                        write_stub("libnccl.so.2", &(struct elfstub){
                                .strings = (const char *const[]){ filler, NULL } });
                        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", prefix, &found, &d), 0);
                        ck_assert_msg(found.len == 0, "k %zu: '%s' found", k, found.len ? found.items[0] : "");
                        strv_release(&found);
                }
}
END_TEST

START_TEST(elf_find_strings_rejects_empty_prefix)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };

        write_stub("libnccl.so.2", &default_stub);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", "", &found, &d), -EINVAL);
        ck_assert_uint_eq(found.len, 0);
}
END_TEST

START_TEST(elf_find_strings_in_elf32)
{
        struct elfstub s = default_stub;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };

        s.elf32 = true;
        write_stub("libnccl.so.2", &s);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", "libnvrtc", &found, &d), 0);
        ck_assert_uint_eq(found.len, 1);
        ck_assert_str_eq(found.items[0], "libnvrtc.so.12");
        strv_release(&found);
}
END_TEST

static const struct {
        const char *triple;
        unsigned machine;
} triple_cases[] = {
        { "x86_64-linux", 62 },
        { "sbsa-linux", 183 },
        { "aarch64-linux", 183 },
        { "ppc64le-linux", 21 },
        { "x86_64", 0 },
        { "armv7-linux", 0 },
        { "", 0 },
        { NULL, 0 },
};

START_TEST(machine_names_and_triples)
{
        for (size_t i = 0; triple_cases[i].triple; i++)
                ck_assert_msg(elf_machine_from_triple(triple_cases[i].triple) == triple_cases[i].machine,
                              "triple '%s'", triple_cases[i].triple);
        ck_assert_uint_eq(elf_machine_from_triple(NULL), 0);
        ck_assert_str_eq(elf_machine_to_arch(62), "x86_64");
        ck_assert_str_eq(elf_machine_to_arch(183), "aarch64");
        ck_assert_str_eq(elf_machine_to_arch(21), "ppc64le");
        ck_assert_ptr_null(elf_machine_to_arch(3));
        ck_assert_ptr_null(elf_machine_to_arch(0));
}
END_TEST

static bool have_program(const char *name)
{
        _cleanup_free_ char *cmd = xasprintf("command -v %s >/dev/null 2>&1", name);

        return system(cmd) == 0;
}

/* The output of a shell command on a stub in tmp_dir (names are ours and
 * need no quoting beyond single quotes). */
static void run_capture(const char *cmd, struct strbuf *out)
{
        _cleanup_free_ char *full = xasprintf("cd '%s' && %s 2>&1", tmp_dir, cmd);
        FILE *f = popen(full, "r");
        char buf[4096];
        size_t n;

        ck_assert_ptr_nonnull(f);
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
                strbuf_add(out, buf, n);
        ck_assert_int_eq(pclose(f), 0);
}

START_TEST(readelf_and_file_accept_the_stub)
{
        _cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
        struct elfstub s = default_stub;

        if (!have_program("readelf")) {
                printf("note: readelf not found, skipping readelf_and_file_accept_the_stub\n");
                return;
        }
        write_stub("libcublas.so.12", &default_stub);
        run_capture("readelf -d -W libcublas.so.12", &out);
        ck_assert_ptr_nonnull(strstr(out.buf, "(NEEDED)             Shared library: [libcublasLt.so.12]"));
        ck_assert_ptr_nonnull(strstr(out.buf, "(NEEDED)             Shared library: [libc.so.6]"));
        ck_assert_ptr_nonnull(strstr(out.buf, "(SONAME)             Library soname: [libcublas.so.12]"));
        ck_assert_ptr_nonnull(strstr(out.buf, "(RUNPATH)            Library runpath: [$ORIGIN]"));
        strbuf_reset(&out);

        /* Everything readelf knows how to show, without a complaint. */
        run_capture("readelf -a -W libcublas.so.12", &out);
        ck_assert_msg(!strstr(out.buf, "Warning") && !strstr(out.buf, "Error"), "%s", out.buf);
        ck_assert_ptr_nonnull(strstr(out.buf, ".rodata"));
        strbuf_reset(&out);

        s.use_rpath = true;
        s.elf32 = true;
        write_stub("librpath.so", &s);
        run_capture("readelf -a -W librpath.so", &out);
        ck_assert_msg(!strstr(out.buf, "Warning") && !strstr(out.buf, "Error"), "%s", out.buf);
        ck_assert_ptr_nonnull(strstr(out.buf, "Library rpath: [$ORIGIN]"));
        ck_assert_ptr_nonnull(strstr(out.buf, "ELF32"));
        strbuf_reset(&out);

        if (have_program("file")) {
                run_capture("file -b libcublas.so.12", &out);
                ck_assert_msg(startswith(out.buf, "ELF 64-bit LSB shared object, x86-64"), "%s", out.buf);
        }
}
END_TEST

/* Run the meson-built mkelfstub (MKELFSTUB) with argv; its exit status. */
static int run_mkelfstub(const char *const *args)
{
        const char *tool = getenv("MKELFSTUB");
        const char *argv[16];
        size_t n = 0;
        pid_t pid;
        int status;

        argv[n++] = tool;
        while (*args && n < ELEMENTSOF(argv) - 1)
                argv[n++] = *args++;
        argv[n] = NULL;
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);

                if (chdir(tmp_dir) < 0 || null < 0 || dup2(null, STDERR_FILENO) < 0)
                        _exit(127);
                execv(tool, (char *const *)argv);
                _exit(127);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        return WEXITSTATUS(status);
}

START_TEST(mkelfstub_writes_readable_stubs)
{
        static const char *const good[] = {
                "--machine", "aarch64", "--soname", "libnccl.so.2", "--needed", "libc.so.6",
                "--rpath", "/opt/lib", "--string", "NCCL version 2.21.5+cuda12.4",
                "--pad", "100", "libnccl.so.2", NULL,
        };
        static const char *const conflicting[] = { "--runpath", "a", "--rpath", "b", "x", NULL };
        static const char *const no_output[] = { "--soname", "x", NULL };
        static const char *const bad_machine[] = { "--machine", "mips", "x", NULL };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };
        struct elf_info info;

        if (!getenv("MKELFSTUB")) {
                printf("note: MKELFSTUB not set, skipping mkelfstub_writes_readable_stubs\n");
                return;
        }
        ck_assert_int_eq(run_mkelfstub(good), 0);
        ck_assert_int_eq(read_info("libnccl.so.2", &info), 0);
        ck_assert_uint_eq(info.machine, 183);
        ck_assert_str_eq(info.soname, "libnccl.so.2");
        ck_assert_str_eq(info.rpath, "/opt/lib");
        ck_assert_uint_eq(info.needed.len, 1);
        elf_info_release(&info);
        ck_assert_int_eq(elf_find_strings(tmp_fd, "libnccl.so.2", "NCCL version", &found, &d), 0);
        ck_assert_uint_eq(found.len, 1);
        strv_release(&found);

        ck_assert_int_eq(run_mkelfstub(conflicting), 2);
        ck_assert_int_eq(run_mkelfstub(no_output), 2);
        ck_assert_int_eq(run_mkelfstub(bad_machine), 2);
}
END_TEST

START_TEST(elf_reads_real_cuda_library)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct elf_info info;

        if (access(REAL_CUDA_LIB "/libcudart.so.13", R_OK) < 0) {
                printf("note: %s/libcudart.so.13 not installed, skipping elf_reads_real_cuda_library\n",
                       REAL_CUDA_LIB);
                return;
        }
        ck_assert_int_eq(elf_read_info(AT_FDCWD, REAL_CUDA_LIB "/libcudart.so.13", &info, &d), 0);
        ck_assert_uint_eq(info.elf_class, 64);
        ck_assert_uint_eq(info.machine, 62);
        ck_assert_uint_eq(info.type, 3);
        ck_assert_str_eq(info.soname, "libcudart.so.13");
        ck_assert(strv_contains(&info.needed, "libc.so.6"));
        ck_assert_ptr_null(info.runpath);
        elf_info_release(&info);

        if (access(REAL_CUDA_LIB "/libcublas.so.13", R_OK) == 0) {
                ck_assert_int_eq(elf_read_info(AT_FDCWD, REAL_CUDA_LIB "/libcublas.so.13", &info, &d), 0);
                ck_assert_str_eq(info.soname, "libcublas.so.13");
                ck_assert_str_eq(info.needed.items[0], "libcublasLt.so.13");
                ck_assert_str_eq(info.runpath, "$ORIGIN");
                elf_info_release(&info);
        }
}
END_TEST

START_TEST(elf_finds_version_in_real_nccl)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv found = { 0 };

        if (access(REAL_CUDA_LIB "/libnccl.so.2", R_OK) < 0) {
                printf("note: %s/libnccl.so.2 not installed, skipping elf_finds_version_in_real_nccl\n",
                       REAL_CUDA_LIB);
                return;
        }
        ck_assert_int_eq(elf_find_strings(AT_FDCWD, REAL_CUDA_LIB "/libnccl.so.2", "NCCL version ",
                                          &found, &d), 0);
        ck_assert_msg(strv_contains(&found, "NCCL version 2.28.9+cuda13.0"), "found %zu strings",
                      found.len);
        strv_release(&found);
}
END_TEST

static Suite *elf_suite(void)
{
        Suite *s = suite_create("elf");
        TCase *tc;

        tc = tcase_create("read_info");
        tcase_add_tmpdir(tc);
        tcase_add_test(tc, elf_reads_soname_needed_runpath);
        tcase_add_test(tc, elf_reads_rpath_for_conda_style);
        tcase_add_test(tc, elf_without_dynamic_strings_has_no_soname);
        tcase_add_test(tc, elf_without_dynamic_section_is_success);
        tcase_add_test(tc, elf_stub_machine_is_read_back);
        tcase_add_test(tc, elf_aarch64_machine);
        tcase_add_test(tc, elf32_is_reported_as_class_32);
        tcase_add_test(tc, elf_without_section_headers_reads_pt_dynamic);
        tcase_add_test(tc, elf_reads_relative_to_dirfd_and_absolute);
        suite_add_tcase(s, tc);

        tc = tcase_create("errors");
        tcase_add_tmpdir(tc);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, non_elf_file_is_enoexec);
        tcase_add_test(tc, static_archive_is_enoexec);
        tcase_add_test(tc, empty_file_is_enoexec);
        tcase_add_test(tc, missing_file_is_enoent);
        tcase_add_test(tc, directory_and_fifo_are_errors);
        tcase_add_test(tc, truncated_stub_at_every_length_fails_cleanly);
        tcase_add_test(tc, truncated_sectionless_stub_fails_cleanly);
        tcase_add_test(tc, corrupted_dynamic_offsets_are_ebadmsg);
        tcase_add_test(tc, repeated_long_needed_strings_are_bounded);
        tcase_add_test(tc, every_byte_overwritten_never_crashes);
        tcase_add_test(tc, random_damage_never_crashes);
        suite_add_tcase(s, tc);

        tc = tcase_create("find_strings");
        tcase_add_tmpdir(tc);
        tcase_add_test(tc, elf_find_strings_finds_markers);
        tcase_add_test(tc, elf_find_strings_ignores_strings_outside_rodata);
        tcase_add_test(tc, elf_find_strings_reads_lrodata_but_not_other_sections);
        tcase_add_test(tc, elf_find_strings_sorts_dedups_and_appends);
        tcase_add_test(tc, elf_find_strings_takes_the_first_line_of_a_text);
        tcase_add_test(tc, elf_find_strings_cuts_long_strings);
        tcase_add_test(tc, elf_find_strings_across_read_chunks);
        tcase_add_test(tc, elf_find_strings_rejects_empty_prefix);
        tcase_add_test(tc, elf_find_strings_in_elf32);
        suite_add_tcase(s, tc);

        tc = tcase_create("machines");
        tcase_add_test(tc, machine_names_and_triples);
        suite_add_tcase(s, tc);

        tc = tcase_create("tools");
        tcase_add_tmpdir(tc);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, readelf_and_file_accept_the_stub);
        tcase_add_test(tc, mkelfstub_writes_readable_stubs);
        suite_add_tcase(s, tc);

        tc = tcase_create("real_libraries");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, elf_reads_real_cuda_library);
        tcase_add_test(tc, elf_finds_version_in_real_nccl);
        suite_add_tcase(s, tc);

        return s;
}

int main(void)
{
        return run_suite(elf_suite());
}
