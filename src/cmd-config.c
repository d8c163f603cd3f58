/* cmd-config.c: `cudamod config [--default]`. */
#include <getopt.h>

#include "cmd-config.h"
#include "config-naming.h"
#include "config-write.h"
#include "output.h"
#include "config.h"
#include "strbuf.h"
#include "banned.h"

static int run_config(int argc, char **argv, const struct global_options *g)
{
        static const struct option options[] = {
                { "default", no_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
        struct config cfg;
        bool builtin = false;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
                switch (c) {
                case 'd':
                        builtin = true;
                        break;
                case 'h':
                        command_print_help(&cmd_config, stdout);
                        return 0;
                default:
                        return command_bad_option(&cmd_config, argv);
                }
        }
        if (!command_check_args(&cmd_config, argc - optind))
                return EXIT_USAGE;
        if (builtin)
                config_init_default(&cfg);
        else if (load_config(g, &cfg) < 0)
                return EXIT_USAGE;
        config_to_yaml(&cfg, &out);
        /* On stderr: stdout stays a config a site can load. */
        if (naming_preset_note(&cfg))
                log_warning(g, "%s", naming_preset_note(&cfg));
        config_release(&cfg);
        fwrite(out.buf, 1, out.len, stdout);
        return 0;
}

const struct command cmd_config = {
        .name = "config",
        .summary = "print the effective (or the built-in) config as YAML",
        .usage = "config [--default]",
        .help = "Print the configuration cudamod works with: the built-in default overlaid\n"
                "with the file given by --config, every key present. The output is itself a\n"
                "valid config file, so it is a starting point for a site.yaml.\n"
                "\n"
                "Options:\n"
                "  --default    print the built-in default, ignoring --config\n"
                "\n"
                "A naming preset that cannot write some name as its tool does (EasyBuild's\n"
                "toolchain part) says so on stderr.\n"
                "\n"
                "A config error is reported as FILE:LINE:COL: message, with exit status 2.\n"
                "Exit status 0 otherwise (1 when stdout cannot be written).\n",
        .min_args = 0,
        .max_args = 0,
        .run = run_config,
};
