/* config-host.c: the host compiler of a CUDA major (config-host.h). */
#include "config-host.h"
#include "banned.h"

const struct config_host_compiler *config_host_compiler(const struct config *c, long cuda_major)
{
        for (size_t i = 0; i < c->n_host_compilers; i++)
                if ((long)c->host_compilers[i].cuda_major == cuda_major)
                        return &c->host_compilers[i];
        return NULL;
}
