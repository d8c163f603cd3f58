#!/usr/bin/env bash
# tests/modules/hostile.sh TOOL: install paths whose names hold quotes,
# brackets, shell and Tcl command syntax, a newline, non-ASCII and invalid
# UTF-8 (the rule: any byte a directory name may hold reaches the
# environment unchanged and can never become code).
#
# Since issue 30 (doc/guide.md "Threat model") a path holding what some
# reader of a modulefile takes as code ('"', '\', '$', '`', ']', a control
# character; in a Tcl tree any byte that is not ASCII) must be refused: no
# module, and a warning that says why; every other must load exactly.
#
# For each case the demo tree is built under a directory of that name (so
# every install prefix holds it), and generated into a tree below it (so the
# MODULEPATH a cuda module adds holds it too), in TOOL's format, both
# layouts. Then, with the real tool, in a working directory where a
# `touch PWNED` would land:
#   module load cuda/12.9 cudnn/9.7.1 nccl/2.21.5
# must give exactly the environment of expect/demo.txt with @ROOT@ = those
# bytes (compared byte for byte; differences shown with printf %q), unload
# and purge must give the start back, and no PWNED may appear anywhere.
#
# A newline cannot be carried by either tool (verified: Lmod 8.6.19 and
# Environment Modules 5.2.0): the modulefile holds it escaped ("\n" in Lua,
# "\012" in Tcl) and the tool reads it right, but the shell code it prints
# for bash (`$LMOD_CMD bash load …`, `modulecmd.tcl bash load …`) has the
# newline raw inside CUDA_HOME=… while every other special byte is
# backslash-escaped, so `eval` runs the next line as a command:
#     CUDA_HOME=/tmp/x
#     /tmp/…/bin/pwn            <- executed
#     y/usr/local/cuda-12.4; export CUDA_HOME;
# So for a path holding a newline the only safe outcome is that cudamod
# refuses it (no module, a warning), as it refuses ':'; the newline cases
# accept exactly that, or a load that carries the bytes without running
# anything.
#
# The generated tree itself (the MODULEPATH a hierarchical cuda module
# adds) is kept at a plain path: Environment Modules 5.2.0 reads MODULEPATH
# entries as glob patterns and expands $VAR in them (a tree under a
# directory holding [ ] { } \ or $… is not found), a tool limitation about
# where a site puts its modulefiles, not about install paths.
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: hostile.sh lmod|em}
MT_SELF="$tool-hostile"
need "$tool"

# A command a newline could smuggle in: Lmod 8.6.19 and Environment Modules
# 5.2.0 backslash-escape spaces, quotes, $, ;, >, … in the shell code they
# print, but not a newline, and a path has no space, so a line holding only
# a path is run as a command.
mkdir -p "$MT_TMP/bin"
printf '#!/bin/sh\ntouch PWNED\n' >"$MT_TMP/bin/pwn"
chmod +x "$MT_TMP/bin/pwn"
nl=$'\n'

# name|bytes of the directory. ':' is not among them: a path holding it
# cannot be put on a path variable, and cudamod refuses it (plan.c).
cases=(
        "double-quote|a\"b"
        "single-quote|a'b"
        "lua-long-bracket|a]]b[[c"
        "lua-long-bracket-level1|a]=]b[=[c"
        "shell-dollar-paren|a\$(touch PWNED)b"
        "shell-backtick|a\`touch PWNED\`b"
        "shell-variable|a\${HOME}\$HOME"
        "tcl-exec|a[exec touch PWNED]b"
        "tcl-variable|a\$env(HOME)b"
        "tcl-braces|a{b}c{"
        "tcl-exec-unclosed|a[exec touch PWNED;[b"
        "shell-specials|a;touch PWNED;|<>*?~!#%^()b"
        "semicolon|a;b"
        "backslash|a\\b\\"
        "space-and-tab|a b$(printf '\t')c"
        "utf8|aé漢b"
)
all=
for c in "${cases[@]}"; do all+=${c#*|}; done
cases+=("all-but-newline|$all")
# Bytes that are not UTF-8: carried exactly by Lmod (Lua strings are
# bytes). Environment Modules decodes a modulefile in the locale's encoding
# and encodes the values back, so in a UTF-8 locale (this file runs in C)
# they come back as other bytes; cudamod refuses them for Tcl modulefiles.
invalid_cases=(
        "invalid-utf8|a$(printf '\377')b"
        "all-and-invalid-utf8|$all$(printf '\377\303')"
)
cases+=("${invalid_cases[@]}")
# With a newline: carried exactly, or refused by cudamod (no module, with a
# warning), as it refuses ':' (see the report in the header of this file).
newline_cases=(
        "newline|a${nl}b"
        "newline-command|a${nl}$MT_TMP/bin/pwn${nl}b"
        "all-at-once|$all${nl}$MT_TMP/bin/pwn${nl}"
)
cases+=("${newline_cases[@]}")

mkdir -p "$MT_TMP/h"
for c in "${cases[@]}"; do
        name=${c%%|*} bytes=${c#*|}
        X_ROOT=$MT_TMP/h/$name/$bytes
        mkdir -p "$X_ROOT"
        if ! (cd "$MT_TMP/cwd" && "$MKFIXTURE" demo "$X_ROOT") >"$MT_TMP/h/$name.mkfixture.log" 2>&1; then
                fail "$name: mkfixture demo failed: $(cat "$MT_TMP/h/$name.mkfixture.log")"
                continue
        fi
        for layout in hier flat; do
                X_OUT=$MT_TMP/h/$name.out-$layout
                what="$name ($(printf '%q' "$bytes")), $layout"
                log=$MT_TMP/h/$name.$layout.generate.log
                if ! run_cudamod --config "$MT_LIB_DIR/site.yaml" generate -o "$X_OUT" \
                        --format "$(tool_format "$tool")" \
                        --layout "$([ $layout = hier ] && echo hierarchical || echo flat)" \
                        "$X_ROOT/sw" >"$log" 2>&1; then
                        fail "$what: cudamod generate failed: $(cat "$log")"
                        continue
                fi
                # What some reader takes as code (doc/guide.md "Threat
                # model": '"', '\\', '$', '`', ']', a control character,
                # and in a Tcl tree any byte that is not ASCII, which Lmod's
                # tcl2lua changes) must be refused: no module, a warning
                # that says why.
                refused=false
                [[ $bytes == *[\"\\\$\`\]]* || $bytes == *[[:cntrl:]]* ]] && refused=true
                if [ "$(tool_format "$tool")" = tcl ] && LC_ALL=C grep -q '[^ -~]' <<<"${bytes//[[:cntrl:]]/}"; then
                        refused=true
                fi
                if $refused; then
                        if [ -e "$X_OUT/$([ $layout = hier ] && echo Core/)cuda" ] || ! grep -q 'gets no module' "$log"; then
                                fail "$what: a module was written, or no warning says why: $(cat "$log")"
                        else
                                say "$what: refused by cudamod: $(grep -m1 'gets no module' "$log" | cut -c1-160)"
                        fi
                        no_pwned || true
                        continue
                fi
                if [ $layout = hier ]; then X_MP=$X_OUT/Core; else X_MP=$X_OUT; fi
                X_SC_OPTS=() X_SC_MODS=() X_SC_EXP=()
                load_expect "$MT_LIB_DIR/expect/demo.txt"
                sdir=$MT_TMP/h/$name.$layout.s
                session "$tool" "$sdir" "$X_MP" <<'EOF'
snap base
step load load cuda/12.9 cudnn/9.7.1 nccl/2.21.5
step unload unload nccl/2.21.5 cudnn/9.7.1 cuda/12.9
step reload load cuda/12.9 cudnn/9.7.1 nccl/2.21.5
step purge purge
EOF
                before=$MT_FAILS
                check_state "$what: load cuda/12.9 cudnn/9.7.1 nccl/2.21.5" "$sdir" load $layout \
                        cuda/12.9 cudnn/9.7.1 nccl/2.21.5 || true
                if [ "$MT_FAILS" != "$before" ]; then
                        no_pwned || true
                        continue
                fi
                check_state "$what: then unload them" "$sdir" unload $layout || true
                check_state "$what: load again" "$sdir" reload $layout cuda/12.9 cudnn/9.7.1 nccl/2.21.5 || true
                check_state "$what: then purge" "$sdir" purge $layout || true
                no_pwned || true
        done
done
mt_finish
