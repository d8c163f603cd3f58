/* cuda-driver.c: the NVIDIA kernel driver a CUDA toolkit needs (the
 * table cuda-driver.h describes). */
#include <string.h>

#include "cuda-driver.h"
#include "util.h"

/* CUDA Toolkit Release Notes (docs.nvidia.com/cuda/cuda-toolkit-release-notes),
 * Table 2 "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor
 * Version Compatibility" (Linux x86_64): CUDA 11.x >= 450.80.02, 12.x >=
 * 525.60.13, 13.x >= 580 (the first 13.x driver, 580.65.06). */
static const struct {
        unsigned long major;
        const char *driver;
} major_minimum[] = {
        { 11, "450.80.02" },
        { 12, "525.60.13" },
        { 13, "580.65.06" },
};

/* The same notes, Table 3 "CUDA Toolkit and Corresponding Driver Versions"
 * (Linux x86_64): the driver each release's GA shipped with, the least of
 * its updates'. */
static const struct {
        unsigned long major, minor;
        const char *driver;
} release_minimum[] = {
        { 11, 0, "450.36.06" },
        { 11, 1, "455.23" },
        { 11, 2, "460.27.03" },
        { 11, 3, "465.19.01" },
        { 11, 4, "470.42.01" },
        { 11, 5, "495.29.05" },
        { 11, 6, "510.39.01" },
        { 11, 7, "515.43.04" },
        { 11, 8, "520.61.05" },
        { 12, 0, "525.60.13" },
        { 12, 1, "530.30.02" },
        { 12, 2, "535.54.03" },
        { 12, 3, "545.23.06" },
        { 12, 4, "550.54.14" },
        { 12, 5, "555.42.02" },
        { 12, 6, "560.28.03" },
        { 12, 8, "570.26" },
        { 12, 9, "575.51.03" },
        { 13, 0, "580.65.06" },
};

bool cuda_driver_version_valid(const char *s)
{
        unsigned parts = 0, digits = 0;

        if (!s)
                return false;
        for (const char *p = s;; p++) {
                if (*p >= '0' && *p <= '9') {
                        if (++digits > 9)
                                return false;
                } else if (*p == '.' || *p == '\0') {
                        if (!digits || ++parts > 4)
                                return false;
                        digits = 0;
                        if (!*p)
                                break;
                } else
                        return false;
        }
        return parts >= 2;
}

bool cuda_driver_minimum(const struct version *cuda, const char *release_driver,
                         struct cuda_driver_minimum *ret)
{
        const char *major = NULL, *release = NULL;

        if (cuda->count < 2)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(major_minimum); i++)
                if (major_minimum[i].major == cuda->n[0])
                        major = major_minimum[i].driver;
        if (!major)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(release_minimum); i++)
                if (release_minimum[i].major == cuda->n[0] && release_minimum[i].minor == cuda->n[1])
                        release = release_minimum[i].driver;
        if (cuda_driver_version_valid(release_driver))
                release = release_driver;
        *ret = (struct cuda_driver_minimum){ .major_min = major, .release_min = release ? release : major };
        return true;
}
