/* fakenccl.c: a stand-in libnccl.so.2 for the probe's tests, with its
 * version fixed at build time (FAKE_NCCL_VERSION). */
int ncclGetVersion(int *v);

int ncclGetVersion(int *v)
{
        *v = FAKE_NCCL_VERSION;
        return 0;
}
