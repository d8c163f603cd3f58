/* fuzz-elf.c: the ELF reader on arbitrary files (libFuzzer). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf-file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char path[64];
        struct elf_info info = { 0 };
        struct strv found = { 0 };
        struct diag d = DIAG_INIT;
        int fd = memfd_create("fuzz-elf", 0);

        if (fd < 0)
                return 0;
        if (write(fd, data, size) != (ssize_t)size) {
                close(fd);
                return 0;
        }
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        if (elf_read_info(AT_FDCWD, path, &info, &d) == 0)
                elf_info_release(&info);
        diag_release(&d);
        if (elf_find_strings(AT_FDCWD, path, "NCCL version ", &found, &d) == 0)
                strv_release(&found);
        diag_release(&d);
        close(fd);
        return 0;
}
