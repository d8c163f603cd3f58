/* fakeversion.c: a stand-in for a library of the CUDA stack that tells its
 * version the way the real one does (FAKE_CALL, the function FAKE_SYMBOL,
 * the version FAKE_MAJOR.FAKE_MINOR.FAKE_PATCH), for the probe's
 * --library requests:
 *   FAKE_CALL_PROPERTY  int FAKE_SYMBOL(int type, int *value) (cuSPARSELt's
 *                       cusparseLtGetProperty, cuDSS's cudssGetProperty);
 *                       FAKE_PROPERTY_FAILS makes it return 7
 *   FAKE_CALL_INT3      void FAKE_SYMBOL(int *, int *, int *) (NVSHMEM's
 *                       nvshmemx_vendor_get_version_info)
 *   FAKE_CALL_MAGMA     void FAKE_SYMBOL(magma_int_t *, ...) (magma_version),
 *                       magma_int_t 64-bit with FAKE_ILP64, else int */
#include <stdint.h>

#if defined(FAKE_CALL_PROPERTY)
int FAKE_SYMBOL(int type, int *value);

int FAKE_SYMBOL(int type, int *value)
{
#ifdef FAKE_PROPERTY_FAILS
        (void)type;
        (void)value;
        return 7;
#else
        switch (type) {
        case 0:
                *value = FAKE_MAJOR;
                return 0;
        case 1:
                *value = FAKE_MINOR;
                return 0;
        case 2:
                *value = FAKE_PATCH;
                return 0;
        default:
                return 3;
        }
#endif
}
#elif defined(FAKE_CALL_INT3) || defined(FAKE_CALL_MAGMA)
#if defined(FAKE_CALL_MAGMA) && defined(FAKE_ILP64)
typedef int64_t fake_int;
#else
typedef int fake_int;
#endif
void FAKE_SYMBOL(fake_int *major, fake_int *minor, fake_int *patch);

void FAKE_SYMBOL(fake_int *major, fake_int *minor, fake_int *patch)
{
        *major = FAKE_MAJOR;
        *minor = FAKE_MINOR;
        *patch = FAKE_PATCH;
}
#else
#error "no FAKE_CALL_*"
#endif
