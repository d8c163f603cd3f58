/* util-path.c: what a path names (util-path.h). */
#include <fcntl.h>
#include <sys/stat.h>

#include "util.h"
#include "util-path.h"
#include "banned.h"

bool is_dir_at(int dirfd, const char *rel)
{
        struct stat st;

        return fstatat(dirfd, rel, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

bool is_file_at(int dirfd, const char *rel)
{
        struct stat st;

        return fstatat(dirfd, rel, &st, 0) == 0 && S_ISREG(st.st_mode);
}

bool is_symlink_at(int dirfd, const char *rel)
{
        struct stat st;

        return fstatat(dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

static const char *const system_dirs[] = {
        "/usr", "/usr/bin", "/usr/include", "/usr/share/man", "/bin", "/sbin", "/usr/sbin",
        "/usr/local/bin", "/usr/local/lib", "/usr/local/lib64", "/usr/local/include", NULL,
};

bool path_is_system_dir(const char *dir)
{
        for (const char *const *s = system_dirs; *s; s++)
                if (streq(dir, *s))
                        return true;
        /* /lib, /lib64, /lib/x86_64-linux-gnu, /usr/lib, /usr/lib64,
         * /usr/lib/aarch64-linux-gnu, …: every loader default. */
        for (const char *const *p = (const char *const[]){ "/lib", "/usr/lib", NULL }; *p; p++) {
                size_t n = strlen(*p);
                const char *rest = dir + n;

                if (strncmp(dir, *p, n) != 0)
                        continue;
                if (*rest == '\0' || streq(rest, "32") || streq(rest, "64") || streq(rest, "x32"))
                        return true;
                if (*rest == '/' && !strchr(rest + 1, '/') && strstr(rest + 1, "-linux-gnu"))
                        return true;
        }
        return false;
}

bool path_has_control_char(const char *s)
{
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
                        return true;
        return false;
}

const char *written_value_problem(const char *s, enum written_kind kind, size_t *ret_at)
{
        const unsigned char *p = (const unsigned char *)s;
        const char *why = NULL;
        size_t n = 1;

        for (; *p; p += n) {
                n = *p >= 0x80 ? utf8_seq_len(p) : 1;
                if ((*p < 0x20 && !(kind == WRITTEN_TEXT && (*p == '\t' || *p == '\n'))) || *p == 0x7f)
                        why = "a control character, which Lmod and Environment Modules write raw into the "
                              "shell code they print";
                /* U+0080-U+009F as UTF-8, or a byte 0x80-0x9f outside any
                 * UTF-8 sequence (a C1 control in an 8-bit terminal). */
                else if ((n == 2 && p[0] == 0xc2 && p[1] <= 0x9f) || (n == 0 && *p <= 0x9f))
                        why = "a C1 control character (U+0080-U+009F), which terminals act on";
                else if (*p == ']')
                        why = "']', which closes the Lua long strings that Lmod's tcl2lua and spider cache "
                              "put values in";
                else if (kind == WRITTEN_WORD && *p == '"')
                        why = "'\"', which Lmod's tcl2lua and RC2lua copy raw into a Lua string of the code "
                              "they run";
                else if (kind == WRITTEN_WORD && *p == '\\')
                        why = "'\\', which Lmod's tcl2lua and RC2lua copy raw into a Lua string of the code "
                              "they run";
                else if (kind == WRITTEN_WORD && *p == '$')
                        why = "'$', which a shell expands where a value reaches it in double quotes";
                else if (kind == WRITTEN_WORD && *p == '`')
                        why = "'`', which a shell runs where a value reaches it in double quotes";
                if (why)
                        break;
                if (n == 0)
                        n = 1;
        }
        if (why && ret_at)
                *ret_at = (size_t)((const char *)p - s);
        return why;
}
