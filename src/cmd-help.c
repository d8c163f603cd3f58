/* cmd-help.c: `cudamod help [COMMAND]`. */
#include "cmd-help.h"
#include "output.h"
#include "banned.h"

static int run_help(int argc, char **argv, const struct global_options *g)
{
        const struct command *cmd;

        if (!command_check_args(&cmd_help, argc - 1))
                return EXIT_USAGE;
        if (argc < 2) {
                print_main_help(g->commands, stdout, true);
                return 0;
        }
        cmd = command_find(g->commands, argv[1]);
        if (!cmd) {
                log_error("'%s' is not a cudamod command; see 'cudamod --help'", argv[1]);
                return EXIT_USAGE;
        }
        command_print_help(cmd, stdout);
        return 0;
}

const struct command cmd_help = {
        .name = "help",
        .summary = "show the help of cudamod or of one command",
        .usage = "help [COMMAND]",
        .help = "With a COMMAND, print its usage, options and what it does.\n",
        .min_args = 0,
        .max_args = 1,
        .run = run_help,
};
