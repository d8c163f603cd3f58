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
