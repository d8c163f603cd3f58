/* main.c: the command table and the global options, nothing else. */
#include <getopt.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd-config.h"
#include "cmd-doctor.h"
#include "cmd-export.h"
#include "cmd-generate.h"
#include "cmd-help.h"
#include "cmd-scan.h"
#include "cmd-show.h"
#include "cmd-validate.h"
#include "output.h"
#include "build-config.h"
#include "banned.h"

static const struct command *const commands[] = {
        &cmd_scan,
        &cmd_generate,
        &cmd_show,
        &cmd_validate,
        &cmd_doctor,
        &cmd_export,
        &cmd_config,
        &cmd_help,
        NULL,
};

int main(int argc, char **argv)
{
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "quiet", no_argument, NULL, 'q' },
                { "verbose", no_argument, NULL, 'v' },
                { "color", required_argument, NULL, 'C' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        struct global_options g = { .commands = commands };
        const char *color = "auto";
        const struct command *cmd;
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, "+qvh", options, NULL)) != -1) {
                switch (c) {
                case 'c':
                        g.config = optarg;
                        break;
                case 'q':
                        g.verbosity = -1;
                        break;
                case 'v':
                        if (g.verbosity >= 0)
                                g.verbosity++;
                        break;
                case 'C':
                        color = optarg;
                        break;
                case 'h':
                        print_main_help(commands, stdout, true);
                        return finish_stdout(0);
                case 'V':
                        printf("cudamod %s\n", CUDAMOD_VERSION);
                        return finish_stdout(0);
                default:
                        if (optopt)
                                log_error("unknown option '-%c'", optopt);
                        else
                                log_error("unknown option '%s'", argv[optind - 1]);
                        print_main_help(commands, stderr, false);
                        return EXIT_USAGE;
                }
        }
        if (streq(color, "always"))
                g.color = true;
        else if (streq(color, "never"))
                g.color = false;
        else if (streq(color, "auto"))
                /* no-color.org: a NO_COLOR that is set and not empty. */
                g.color = isatty(STDOUT_FILENO) && !(getenv("NO_COLOR") && *getenv("NO_COLOR")) &&
                          !(getenv("TERM") && streq(getenv("TERM"), "dumb"));
        else {
                log_error("--color: '%s' is not one of auto, always, never", color);
                return EXIT_USAGE;
        }
        if (optind >= argc) {
                print_main_help(commands, stderr, false);
                return EXIT_USAGE;
        }
        cmd = command_find(commands, argv[optind]);
        if (!cmd) {
                log_error("'%s' is not a cudamod command; see 'cudamod --help'", argv[optind]);
                return EXIT_USAGE;
        }
        argv += optind;
        argc -= optind;
        optind = 0; /* reset getopt for the command (glibc: 0 re-initialises) */
        return finish_stdout(cmd->run(argc, argv, &g));
}
