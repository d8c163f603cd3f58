#!/usr/bin/env bash
# tests/modules/fixtures-covered.sh: every fixture `mkfixture --list` knows
# has its expectation file (tests/modules/expect/NAME.txt) and every
# expectation file names a fixture, so that a new layout fixture cannot
# escape the module-tool tests (tests/meson.build registers one test per
# expectation file and tool).
source "$(dirname "$0")/lib.sh"
MT_SELF=modules-fixtures-covered
want=$("$MKFIXTURE" --list | awk '{ print $1 }' | sort)
have=$(cd "$MT_LIB_DIR/expect" && ls -- *.txt | sed 's/\.txt$//' | sort)
if [ "$want" != "$have" ]; then
        fail "fixtures (mkfixture --list, -) and expectation files (tests/modules/expect, +) differ:"
        diff -u --label fixtures --label expect <(echo "$want") <(echo "$have") | sed 's/^/    /' || true
fi
mt_finish
