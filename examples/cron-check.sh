#!/bin/sh
# cron-check.sh: keep an eye on the CUDA module tree cudamod writes.
#
# From cron, daily (copy to /etc/cron.daily/cudamod, mode 0755):
#   1. `cudamod generate --check`: has the tree drifted from the installs?
#      (a new CUDA, cuDNN or NCCL without its module, an install gone, a
#      module edited by hand, a file in the way that cudamod did not write);
#   2. `cudamod validate --json`: do the modules still load, link and run,
#      on the GPU nodes of the config's validate.targets?
# and mail the admins (or, without mail(1), log with logger(1)) what is
# wrong. Nothing is written.
#
# From provisioning, after installing software: `cron-check.sh --update`
# writes the tree first (`cudamod generate`), then validates it.
#
# Exit status: 0 all well, 1 something was reported, 2 cudamod could not
# run (usage or configuration error, also reported).
#
# Settings, from the environment:
#   CUDAMOD         the cudamod to run (default: cudamod on PATH)
#   CUDAMOD_CONFIG  the site config (default: /etc/cudamod/site.yaml)
#   CUDAMOD_MAILTO  who gets the reports (default: root)
#   CUDAMOD_MODULEPATH  the tree to validate (default: the config's output,
#                   its Core in the hierarchical layout)
set -u

cudamod=${CUDAMOD:-cudamod}
config=${CUDAMOD_CONFIG:-/etc/cudamod/site.yaml}
mailto=${CUDAMOD_MAILTO:-root}
update=false

case ${1-} in
'') ;;
--update) update=true ;;
*)
    echo "usage: cron-check.sh [--update]" >&2
    exit 2
    ;;
esac

# validate looks modules up in --modulepath, else in the output of the
# config given (so a MODULEPATH of other modules in cron's environment does
# not matter).
if [ -n "${CUDAMOD_MODULEPATH:-}" ]; then
    set -- --modulepath "$CUDAMOD_MODULEPATH"
else
    set --
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-check.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' HUP INT TERM

status=0
host=$(uname -n)

# report SUBJECT FILE: mail FILE to the admins, else log it.
report()
{
    if command -v mail >/dev/null 2>&1; then
        mail -s "cudamod on $host: $1" "$mailto" <"$2"
    else
        logger -t cudamod -p user.err "$1: see below"
        logger -t cudamod -p user.err <"$2"
    fi
}

# set_status N: keep the worst exit status (2 over 1 over 0).
set_status()
{
    [ "$1" -gt "$status" ] && status=$1
    return 0
}

# 1. The tree against the installs. generate exits 0 when done (with
# --check: nothing to do), 1 when the tree is out of date (--check) or could
# not be written, 2 for a usage or configuration error (nothing written).
if $update; then
    "$cudamod" -q --config "$config" generate >"$tmp/generate" 2>&1
    rc=$?
    case $rc in
    0) ;;
    1)
        report "the module tree could not be written" "$tmp/generate"
        set_status 1
        ;;
    *)
        report "generate failed (exit status $rc)" "$tmp/generate"
        set_status 2
        ;;
    esac
else
    "$cudamod" -q --config "$config" generate --check >"$tmp/check" 2>&1
    rc=$?
    case $rc in
    0) ;;
    1)
        {
            echo "The module tree differs from what the installs give. To bring it up"
            echo "to date: cudamod --config $config generate"
            echo "(--force to replace modules edited by hand; --prune to remove"
            echo "modules whose install is gone)."
            echo
            cat "$tmp/check"
        } >"$tmp/check.mail"
        report "module tree out of date" "$tmp/check.mail"
        set_status 1
        ;;
    *)
        report "generate --check failed (exit status $rc)" "$tmp/check"
        set_status 2
        ;;
    esac
fi

# 2. The modules themselves. validate exits 0 when nothing failed, 1 when a
# check failed or a target's launcher failed (a partition down, resources
# refused), 2 for a usage or configuration error.
"$cudamod" -q --config "$config" validate "$@" --json >"$tmp/validate.json" 2>"$tmp/validate.err"
rc=$?
# A modulepath without modules (a tree not written yet, a filesystem not
# mounted, a typo in --modulepath) is an error of validate's (exit 1 or 2)
# that says so: report it as such.
if [ "$rc" -ne 0 ] && grep -q -e 'no modules in the modulepath' -e 'modulepath directory .* does not exist' \
        "$tmp/validate.err"; then
    {
        echo "cudamod validate found no module to validate in the modulepath."
        echo
        cat "$tmp/validate.err"
    } >"$tmp/empty.mail"
    report "no modules to validate" "$tmp/empty.mail"
    set_status 1
elif [ "$rc" -ne 0 ]; then
    {
        if [ "$rc" -eq 1 ] && command -v jq >/dev/null 2>&1; then
            # One line per failed check and per target whose launcher failed.
            jq -r '
                [.targets[] | select(.status == "launcher-failed") | .name] as $down
                | (.targets[] | select(.status == "launcher-failed")
                   | "target \(.name): the launcher failed: \(.message // "")"),
                  (.modules[] | select(.status == "fail") | . as $m
                   | .checks[] | select(.status == "fail")
                   | (.target // null) as $t
                   | select(any($down[]; . == $t) | not)
                   | "\($m.module)"
                     + (if ($m.with // []) != [] then " (with \($m.with | join(" ")))" else "" end)
                     + ": \(.id)" + (if $t then "@\($t)" else "" end)
                     + ": \(.message)")
            ' "$tmp/validate.json"
            echo
            echo "Details: cudamod --config $config validate${*:+ $*}"
        else
            cat "$tmp/validate.json"
        fi
        cat "$tmp/validate.err"
    } >"$tmp/validate.mail" 2>&1
    if [ "$rc" -eq 1 ]; then
        report "module validation failed" "$tmp/validate.mail"
        set_status 1
    else
        report "validate failed (exit status $rc)" "$tmp/validate.mail"
        set_status 2
    fi
fi

exit "$status"
