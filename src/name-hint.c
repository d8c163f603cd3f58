/* name-hint.c: versions from directory and archive names (name-hint.h). */
#include <errno.h>

#include "component.h"
#include "name-hint.h"
#include "util.h"
#include "version.h"
#include "banned.h"

/* File and directory names are at most NAME_MAX (255) bytes. */
#define NAME_HINT_MAX 255

/* Name hints
 *
 * The name is matched against the known shapes one by one, on a lowercased
 * copy with any archive extension cut. What each shape yields:
 *
 *   nvidia_<dist>[_cuNN]-<ver>.dist-info   version, cuda NN; the dist must
 *                                          be the component's wheel
 *   <comp>-…                               see name_hint_component()
 *   nccl with parent X.Y (HPC SDK          cuda X.Y
 *     comm_libs/X.Y/nccl)
 *   <ver>[-<anything>][-CUDA-<cver>]       version (at least MAJOR.MINOR),
 *     (EasyBuild, HPC SDK cuda/X.Y,        cuda from a "cuda" marker; not
 *     or a bare version)                   when parent names another
 *                                          component (a cuDNN copied into
 *                                          CUDA/12.4.0 is not version 12.4.0)
 *
 * For component "cuda", `version` is the toolkit (or wheel) version and
 * `cuda` is only set from a wheel's -cuNN suffix. */

static bool is_name_sep(char c)
{
        return c == '\0' || c == '-' || c == '_' || c == '+';
}

bool name_version(const char *p, struct version *ret, const char **ret_end)
{
        struct version v;
        const char *end;

        if (version_parse_prefix(p, &v, &end) < 0 || !is_name_sep(*end))
                return false;
        *ret = v;
        if (ret_end)
                *ret_end = end;
        return true;
}

bool name_cuda_marker(const char *tail, struct version *ret)
{
        for (const char *p = tail; (p = strstr(p, "cuda")); p++) {
                const char *q = p + 4;

                if (p != tail && !is_name_sep(p[-1]))
                        continue;
                /* EasyBuild's -CUDAcore-12.6.2 (cuDSS). */
                if (startswith(q, "core"))
                        q += 4;
                if (*q == '-' || *q == '_')
                        q++;
                if (name_version(q, ret, NULL))
                        return true;
        }
        return false;
}

static bool name_hint_wheel(const struct component *c, const char *s, struct name_hint *h)
{
        char dist[PIP_NAME_MAX + 1], norm[PIP_NAME_MAX + 1];
        const char *dash = strchr(s, '-'), *end;
        unsigned long major;
        struct version v;
        bool ok;

        if (!dash || (size_t)(dash - s) > PIP_NAME_MAX)
                return false;
        memcpy(dist, s, (size_t)(dash - s));
        dist[dash - s] = '\0';
        /* A fifth part is no version; "2.26.2.post1" is 2.26.2. */
        if (version_parse_prefix(dash + 1, &v, &end) < 0 ||
            (end[0] == '.' && ascii_isdigit(end[1])))
                return false;
        if (!pip_name_normalise(dist, norm, sizeof(norm), &major))
                return false;

        if (c->toolkit)
                ok = cuda_comp_from_pip_name(norm) >= 0;
        else
                ok = c->wheel && streq(norm, c->wheel);
        if (!ok)
                return false;

        h->version = v;
        if (major > 0)
                h->cuda = (struct version){ .n = { major }, .count = 1 };
        return true;
}

/* Names that start with "<component>-" or "<component>_":
 *   cudnn-linux-<arch>-<ver>_cuda<cver>[-archive]   (8.3 and later archives)
 *   cudnn-<cver>-linux-<arch>-v<ver>                (8.2 and older archives)
 *   cudnn-cuda<cver>-linux-<arch>-v<ver>            (ALCF)
 *   cudnn-<ver>-<cmajor>[-<hash>]                   (Spack: 8.9.7.29-12)
 *   nccl_<ver>-<rev>+cuda<cver>_<arch>              (tarball)
 *   nccl-<ver>-<rev>[-<hash>]                       (Spack: the -1 is a
 *                                                    package revision)
 *   cuda-<ver>[-<hash>]                             (Spack, site dirs) */
static bool name_hint_component(const struct component *c, const char *s, struct name_hint *h)
{
        const char *prefixes[] = { c->name, c->archive };
        const char *p = NULL, *end;

        for (size_t i = 0; i < ELEMENTSOF(prefixes) && !p; i++) {
                size_t l = prefixes[i] ? strlen(prefixes[i]) : 0;

                if (l && strncmp(s, prefixes[i], l) == 0 && (s[l] == '-' || s[l] == '_'))
                        p = s + l + 1;
        }
        if (!p)
                return false;

        /* NVIDIA's redist archives: <name>-linux-<arch>-<ver>_cuda<cver>[-archive]. */
        if (startswith(p, "linux-")) {
                p = strchr(p + 6, '-');
                if (!p || !name_version(p + 1, &h->version, &end))
                        return false;
                name_cuda_marker(end, &h->cuda);
                return true;
        }
        if (c->name_hint && c->name_hint(p, h))
                return true;
        if (!name_version(p, &h->version, &end))
                return false;
        if (!c->toolkit)
                name_cuda_marker(end, &h->cuda);
        return true;
}

/* Whether name names a component, ignoring ASCII case ("CUDA", "cuDNN"
 * directory names): by the names alone, so that the detectors below the
 * table can ask. */
static bool names_component(const char *name)
{
        for (const char *const *n = component_names; *n; n++)
                if (ascii_strcaseeq(*n, name))
                        return true;
        return false;
}

int name_hint_of(const struct component *c, const char *name, const char *parent,
                 struct name_hint *ret)
{
        static const char *const extensions[] = {
                ".tar.xz", ".tar.gz", ".tar.bz2", ".tar.zst", ".txz", ".tgz", ".tar", ".zip",
        };
        struct name_hint h = { .version.count = 0 };
        char s[NAME_HINT_MAX + 1];
        size_t n;
        bool found;

        if (!c || !name)
                return -EINVAL;

        n = strnlen(name, sizeof(s));
        if (n == 0 || n >= sizeof(s))
                return -ENOENT;
        for (size_t i = 0; i < n; i++)
                s[i] = ascii_tolower(name[i]);
        s[n] = '\0';

        if (endswith(s, ".dist-info")) {
                s[n - strlen(".dist-info")] = '\0';
                found = name_hint_wheel(c, s, &h);
        } else {
                for (size_t i = 0; i < ELEMENTSOF(extensions); i++)
                        if (endswith(s, extensions[i])) {
                                s[n - strlen(extensions[i])] = '\0';
                                break;
                        }

                if (name_hint_component(c, s, &h))
                        found = true;
                else if (c->hpc_sdk_comm_libs && streq(s, c->name) && parent) {
                        struct version v;

                        found = version_parse(parent, &v) == 0 && v.count >= 2;
                        if (found)
                                h.cuda = v;
                } else {
                        const char *end;

                        found = !(parent && names_component(parent) &&
                                  !ascii_strcaseeq(parent, c->name)) &&
                                name_version(s, &h.version, &end) && h.version.count >= 2;
                        if (found && !c->toolkit)
                                name_cuda_marker(end, &h.cuda);
                }
        }

        if (!found || (h.version.count == 0 && h.cuda.count == 0))
                return -ENOENT;
        *ret = h;
        return 0;
}
