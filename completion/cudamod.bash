# bash completion for cudamod                                  -*- shell-script -*-
#
# Installed as <completionsdir>/cudamod, where bash-completion loads it the
# first time `cudamod <TAB>` is pressed. Needs bash-completion 2.x: 2.12
# and later through their _comp_* functions (_comp_initialize,
# _comp_compgen filedir), 2.11 and earlier through _init_completion and
# _filedir, which 2.12+ keep only in a compatibility file (their
# bash_completion.d/000_bash_completion_compat.bash), not loaded when
# BASH_COMPLETION_COMPAT_DIR names another directory.
#
# What it completes:
#   cudamod <TAB>                      the commands; global options after '-'
#   cudamod --color <TAB>              auto always never
#   cudamod generate --format <TAB>    lua tcl; --layout: hierarchical flat
#   cudamod show|validate <TAB>        module names (NAME/VERSION) of the
#                                      modulepath: --modulepath given on the
#                                      line, else the output directory of
#                                      --config's file (its Core in the
#                                      hierarchical layout), else
#                                      $MODULEPATH, as show does
#   cudamod validate --target <TAB>    the names of the config's
#                                      validate.targets (needs --config)
#   cudamod export <TAB>               spack easybuild; then a directory
#   --config FILE, -o DIR, --modulepath DIR, --driver-libdir DIR, ROOT and
#   PATH arguments: files or directories.
#
# Every command parses its options with getopt_long, which takes options
# anywhere on the line until '--': `cudamod scan /opt --json` is a JSON scan
# of /opt. Completion follows the same rule and offers no option after '--'.

# The commands and the global options, kept in step with `cudamod --help`
# (and each command's options with `cudamod help CMD`) by test-completion.sh.
_cudamod_commands='scan generate show validate doctor export config help'
_cudamod_global_opts='--config --quiet -q --verbose -v --color --help -h --version'

# _cudamod_dequote WORD: WORD as the shell would give it to cudamod, for the
# simple spellings (quotes around it, backslash escapes, a leading ~/).
# Nothing is evaluated: a word on the line is never run.
_cudamod_dequote()
{
    local w=$1 out='' c i
    case $w in
        \'*\') w=${w:1:${#w}-2} ; printf '%s' "$w" ; return ;;
        \"*\") w=${w:1:${#w}-2} ;;
        *)
            for ((i = 0; i < ${#w}; i++)); do
                c=${w:i:1}
                if [[ $c == \\ ]]; then
                    ((i++))
                    c=${w:i:1}
                fi
                out+=$c
            done
            w=$out
            ;;
    esac
    [[ $w == \~ ]] && w=$HOME
    [[ $w == \~/* ]] && w=$HOME/${w#\~/}
    printf '%s' "$w"
}

# _cudamod_reply WORDS: COMPREPLY is the WORDS that start with $cur.
_cudamod_reply()
{
    mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
}

# _cudamod_run ARGS...: run the cudamod named on the line (words[0]), if
# it can be run, with stderr discarded.
_cudamod_run()
{
    local exe
    exe=$(_cudamod_dequote "${words[0]}")
    [[ $exe == */* ]] || exe=$(type -P "$exe")
    [[ -n $exe && -x $exe ]] || return 1
    "$exe" "$@" 2>/dev/null
}

# _cudamod_yaml_scalar VALUE: a scalar as `cudamod config` prints it
# (normalised YAML: plain, or single-quoted when it needs quoting).
_cudamod_yaml_scalar()
{
    local v=$1
    if [[ $v == \'*\' ]]; then
        v=${v:1:${#v}-2}
        v=${v//\'\'/\'}
    elif [[ $v == \"*\" ]]; then
        v=${v:1:${#v}-2}
    fi
    printf '%s' "$v"
}

# _cudamod_modules DIR...: the modules NAME/VERSION in the modulepath DIRs:
# DIR/NAME/VERSION.lua (Lmod) and DIR/NAME/VERSION holding a '#%Module'
# header (Tcl). Only the top level of a hierarchy: what a cuda module adds
# to MODULEPATH is not followed. Dot files (.modulerc.lua, .version, hidden
# versions such as .12.9), 'default' links and backups (~) are skipped.
_cudamod_modules()
{
    local shopts dir name file version head seen=' '
    shopts=$(shopt -p nullglob dotglob failglob nocaseglob extglob)
    shopt -s nullglob
    shopt -u dotglob failglob nocaseglob
    for dir; do
        [[ -n $dir && -d $dir ]] || continue
        for name in "$dir"/*/; do
            name=${name%/}
            name=${name##*/}
            [[ $name == .* ]] && continue
            for file in "$dir/$name"/*; do
                [[ -f $file ]] || continue
                version=${file##*/}
                case $version in
                    .* | *~ | default) continue ;;
                    *.lua) version=${version%.lua} ;;
                    *)
                        head=
                        read -r -n 8 head <"$file" 2>/dev/null
                        [[ $head == '#%Module' ]] || continue
                        ;;
                esac
                [[ $seen == *" $name/$version "* ]] && continue
                seen+="$name/$version "
                printf '%s\n' "$name/$version"
            done
        done
    done
    eval "$shopts"
}

# _cudamod_filedir [-d]: files (directories) matching $cur, added to
# COMPREPLY; _cudamod_ltrim_colon WORD: drop from COMPREPLY the part of
# WORD up to its last ':' (readline shows only what follows it). Each with
# the API of the bash-completion loaded.
_cudamod_filedir()
{
    if declare -F _comp_compgen >/dev/null; then
        _comp_compgen -a filedir "$@"
    else
        _filedir "$@"
    fi
}

_cudamod_ltrim_colon()
{
    if declare -F _comp_ltrim_colon_completions >/dev/null; then
        _comp_ltrim_colon_completions "$@"
    else
        __ltrim_colon_completions "$@"
    fi
}

_cudamod()
{
    local cur prev words cword split=false
    if declare -F _comp_initialize >/dev/null; then
        local was_split='' comp_args
        _comp_initialize -s -n : -- "$@" || return
        [[ -n $was_split ]] && split=true
    else
        _init_completion -s -n : || return
    fi

    # The command and the global options before it.
    local i w cmd='' cmd_i=0 config=''
    for ((i = 1; i < cword; i++)); do
        w=${words[i]}
        case $w in
            --config)
                config=${words[i + 1]}
                ((i++))
                ;;
            --config=*) config=${w#--config=} ;;
            --color) ((i++)) ;;
            -*) ;;
            *)
                cmd=$w
                cmd_i=$i
                break
                ;;
        esac
    done
    [[ -n $config ]] && config=$(_cudamod_dequote "$config")

    if [[ -z $cmd ]]; then
        case $prev in
            --config)
                _cudamod_filedir
                return
                ;;
            --color)
                _cudamod_reply 'auto always never'
                return
                ;;
        esac
        $split && return
        if [[ $cur == -* ]]; then
            _cudamod_reply "$_cudamod_global_opts"
        else
            _cudamod_reply "$_cudamod_commands"
        fi
        return
    fi

    # The command's options, the modulepaths given, and whether '--'
    # already ended its options.
    local opts='' args_opts='' positional=false
    local -a modulepath=()
    case $cmd in
        scan)
            opts='--json --jobs'
            args_opts='--jobs'
            ;;
        generate)
            opts='--output -o --format --layout --dry-run --check --prune --force --json --lock-timeout --jobs --rename'
            args_opts='--output|-o|--format|--layout|--lock-timeout|--jobs'
            ;;
        show)
            opts='--modulepath --trust-modulefiles --json'
            args_opts='--modulepath'
            ;;
        doctor)
            opts='--modulepath --trust-modulefiles --json --build --no-compile'
            args_opts='--modulepath'
            ;;
        validate)
            opts='--modulepath --jobs -j --target --launcher --timeout --driver-libdir
                  --require-device --no-compile --no-strict-modes --trust-modulefiles --strict --arch-list --json --lock-timeout'
            args_opts='--modulepath|--jobs|-j|--target|--launcher|--timeout|--driver-libdir|--lock-timeout'
            ;;
        config) opts='--default' ;;
        export) ;;
        help) ;;
        *) return ;; # not a cudamod command
    esac
    opts+=' --help -h'

    for ((i = cmd_i + 1; i < cword; i++)); do
        w=${words[i]}
        if $positional; then
            continue
        elif [[ $w == -- ]]; then
            positional=true
        elif [[ $w == --modulepath=* ]]; then
            modulepath+=("${w#--modulepath=}")
        elif [[ -n $args_opts && $w == @($args_opts) ]]; then
            [[ $w == --modulepath ]] && modulepath+=("${words[i + 1]}")
            ((i++))
        fi
    done

    # The value of an option.
    case $prev in
        --output | -o | --driver-libdir)
            _cudamod_filedir -d
            return
            ;;
        --modulepath)
            # Several directories may be given in one, separated by ':'.
            if [[ $cur == *:* ]]; then
                local before=${cur%:*} orig=$cur
                cur=${cur##*:}
                _cudamod_filedir -d
                for i in "${!COMPREPLY[@]}"; do
                    COMPREPLY[i]=$before:${COMPREPLY[i]}
                done
                _cudamod_ltrim_colon "$orig"
            else
                _cudamod_filedir -d
            fi
            return
            ;;
        --format)
            _cudamod_reply 'lua tcl'
            return
            ;;
        --layout)
            _cudamod_reply 'hierarchical flat'
            return
            ;;
        --target)
            # The names of the config's validate.targets; none without
            # --config (there is no default config file).
            [[ -n $config ]] || return
            local line in_validate=false name
            while IFS= read -r line; do
                case $line in
                    'validate:'*) in_validate=true ;;
                    [![:space:]]*) in_validate=false ;;
                    '  - name: '*)
                        $in_validate || continue
                        name=$(_cudamod_yaml_scalar "${line#'  - name: '}")
                        [[ $name == "$cur"* ]] && COMPREPLY+=("$name")
                        ;;
                esac
            done < <(_cudamod_run --config "$config" config)
            # Names may hold spaces: keep each one a single word.
            local -a quoted=()
            for name in "${COMPREPLY[@]}"; do
                quoted+=("$(printf '%q' "$name")")
            done
            COMPREPLY=("${quoted[@]}")
            return
            ;;
        --jobs | -j | --timeout | --launcher | --lock-timeout)
            return
            ;;
    esac
    $split && return

    if ! $positional && [[ $cur == -* ]]; then
        _cudamod_reply "$opts"
        return
    fi

    case $cmd in
        scan | generate)
            _cudamod_filedir -d
            ;;
        doctor)
            _cudamod_filedir
            ;;
        show | validate)
            local dir module
            local -a dirs=() split_dirs=()
            if ((${#modulepath[@]})); then
                for dir in "${modulepath[@]}"; do
                    dir=$(_cudamod_dequote "$dir")
                    IFS=: read -r -a split_dirs <<<"$dir"
                    dirs+=("${split_dirs[@]}")
                done
            elif [[ -n $config ]]; then
                # As show and validate do: the output of the config given,
                # its core level (Core) in the hierarchical layout; then
                # $MODULEPATH.
                local line output='' layout='' core=Core
                while IFS= read -r line; do
                    case $line in
                        'output: '*) output=$(_cudamod_yaml_scalar "${line#output: }") ;;
                        'layout: '*) layout=$(_cudamod_yaml_scalar "${line#layout: }") ;;
                        # naming.levels.core, the only "core" key
                        '    core: '*) core=$(_cudamod_yaml_scalar "${line#    core: }") ;;
                    esac
                done < <(_cudamod_run --config "$config" config)
                if [[ -n $output ]]; then
                    [[ $layout == hierarchical ]] && output+=/$core
                    dirs=("$output")
                elif [[ -n ${MODULEPATH-} ]]; then
                    IFS=: read -r -a dirs <<<"$MODULEPATH"
                fi
            elif [[ -n ${MODULEPATH-} ]]; then
                IFS=: read -r -a dirs <<<"$MODULEPATH"
            fi
            while IFS= read -r module; do
                [[ $module == "$cur"* ]] && COMPREPLY+=("$module")
            done < <(_cudamod_modules "${dirs[@]}")
            ;;
        export)
            # The format, then the generated tree: directories.
            local n=0
            for ((i = cmd_i + 1; i < cword; i++)); do
                [[ ${words[i]} == -* && ${words[i]} != - ]] || n=$((n + 1))
            done
            if ((n == 0)); then
                _cudamod_reply 'spack easybuild'
            elif ((n == 1)); then
                _cudamod_filedir -d
            fi
            ;;
        help)
            # One command, and only one.
            ((cword == cmd_i + 1)) &&
                _cudamod_reply "$_cudamod_commands"
            ;;
    esac
} &&
    complete -F _cudamod cudamod

# ex: filetype=sh
