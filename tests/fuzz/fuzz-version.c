/* fuzz-version.c: every version parser on arbitrary bytes (libFuzzer). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "component-table.h"
#include "name-hint.h"
#include "version.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *buf = (const char *)data;
        char *s = malloc(size + 1);
        struct version_json vj = { 0 };
        struct diag d = DIAG_INIT;
        struct version v, w;
        struct name_hint h;
        char *name = NULL, *ver = NULL;
        long l;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        if (version_json_parse(buf, size, "fuzz.json", &vj, &d) == 0)
                version_json_release(&vj);
        diag_release(&d);
        (void)version_txt_parse(buf, size, "version.txt", &v, &d);
        diag_release(&d);
        (void)header_define_long(buf, size, "CUDA_VERSION", &l);
        (void)cuda_header_parse(buf, size, &v);
        (void)cudnn_header_parse(buf, size, &v);
        (void)nccl_header_parse(buf, size, &v);
        if (metadata_parse(buf, size, &name, &ver) == 0) {
                free(name);
                free(ver);
        }
        (void)nvcc_release_parse(s, &v, &w);
        (void)nccl_version_string_parse(s, &v, &w);
        (void)soname_version_parse(s, "libcudart", &v);
        if (version_parse(s, &v) == 0) {
                char *t = version_to_string(&v, 0);
                free(t);
        }
        (void)name_hint_parse("cudnn", s, "cuDNN", &h);
        (void)name_hint_parse("nccl", s, NULL, &h);
        (void)name_hint_parse("cuda", s, "CUDA", &h);
        free(s);
        return 0;
}
