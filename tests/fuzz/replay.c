/* replay.c: run a fuzz target's LLVMFuzzerTestOneInput on files, without
 * libFuzzer, so that the seed corpus and every input a fuzzer once broke
 * on (tests/fuzz/regressions/) run in the normal suite, under gcc, ASan
 * and valgrind alike. Arguments are files or directories (their regular
 * files, in name order). A failing input aborts, as under libFuzzer. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
        FILE *f = fopen(path, "rb");
        uint8_t *buf = NULL;
        size_t len = 0, alloc = 0, n;

        if (!f) {
                fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
                return -1;
        }
        do {
                if (len == alloc) {
                        alloc = alloc ? 2 * alloc : 65536;
                        buf = realloc(buf, alloc);
                        if (!buf)
                                abort();
                }
                n = fread(buf + len, 1, alloc - len, f);
                len += n;
        } while (n > 0);
        fclose(f);
        /* A copy of exactly len bytes, so ASan sees a read past the input. */
        uint8_t *exact = malloc(len ? len : 1);
        if (!exact)
                abort();
        memcpy(exact, buf, len);
        free(buf);
        fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
        return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
        int files = 0, bad = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;
                struct dirent **names;
                int n;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
                        bad++;
                        continue;
                }
                if (!S_ISDIR(st.st_mode)) {
                        bad += replay_file(argv[i]) < 0;
                        files++;
                        continue;
                }
                n = scandir(argv[i], &names, NULL, by_name);
                if (n < 0) {
                        fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
                        bad++;
                        continue;
                }
                for (int k = 0; k < n; k++) {
                        char path[4096];
                        snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]->d_name);
                        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                                bad += replay_file(path) < 0;
                                files++;
                        }
                        free(names[k]);
                }
                free(names);
        }
        printf("replay: %d inputs, %d unreadable\n", files, bad);
        return bad ? 1 : files ? 0 : 77;
}
