/* cmd-export.c: `cudamod export spack|easybuild DIR`: what Spack and
 * EasyBuild need to build on the modules of a generated tree (export.c),
 * on stdout. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "cmd-export.h"
#include "diag.h"
#include "export.h"
#include "output.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

static int run_export(int argc, char **argv, const struct global_options *g)
{
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_(strv_release) struct strv left_out = { 0 };
        enum export_format f;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
                switch (c) {
                case 'h':
                        command_print_help(&cmd_export, stdout);
                        return 0;
                default:
                        return command_bad_option(&cmd_export, argv);
                }
        }
        if (!command_check_args(&cmd_export, argc - optind))
                return EXIT_USAGE;
        f = export_format_from_string(argv[optind]);
        if (f < 0) {
                log_error("export: '%s' is not one of spack, easybuild", argv[optind]);
                return EXIT_USAGE;
        }
        /* A directory that is not a generated tree is a usage error: the
         * command was given the wrong argument. */
        if (export_tree(argv[optind + 1], f, &out, &left_out, &d) < 0) {
                log_diag(&d);
                return EXIT_USAGE;
        }
        for (size_t i = 0; i < left_out.len; i++)
                log_warning(g, "left out %s", left_out.items[i]);
        if (fwrite(out.buf, 1, out.len, stdout) != out.len) {
                log_error("cannot write the export");
                return EXIT_FOUND_FAILURE;
        }
        return 0;
}

const struct command cmd_export = {
        .name = "export",
        .summary = "print Spack's externals or EasyBuild's metadata for a generated tree",
        .usage = "export spack|easybuild DIR",
        .help = "DIR is a directory 'cudamod generate -o DIR' wrote; its index tells\n"
                "which install each module is for. Print on stdout:\n"
                "\n"
                "  spack      a packages.yaml: for each package (cuda, cudnn, nccl,\n"
                "             cusparselt, cudss, nvshmem, magma, cutensor) buildable: false\n"
                "             and an external per module: spec (name@version, +cuda for\n"
                "             nccl, nvshmem and magma, with the cuda_arch a Spack\n"
                "             spec.json of the install names), prefix, and the modules\n"
                "             to load (a library's CUDA module first). Use it as a\n"
                "             configuration scope's packages.yaml, or\n"
                "             'spack config add -f FILE'.\n"
                "  easybuild  EasyBuild's external modules metadata: a section per module\n"
                "             ([cuda/12.9]) with its software's name (CUDA, cuDNN, ...),\n"
                "             version and prefix, for 'eb --external-modules-metadata=FILE'.\n"
                "\n"
                "A runtime-only install (libraries without headers) is left out, with a\n"
                "warning on stderr: no build can compile against it. The same tree gives\n"
                "the same bytes. The exit status is 0 when the export was printed, 1 when\n"
                "stdout could not be written, 2 for a usage error or a DIR that is not a\n"
                "tree cudamod generated (or whose index is not to be trusted).\n",
        .min_args = 2,
        .max_args = 2,
        .run = run_export,
};
