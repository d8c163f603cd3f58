#!/usr/bin/env python3
"""show-parity.py BASE.env LOAD.env SHOW.json: compare what the real tool did
(two `env -0` snapshots, before and after `module load`) with what
`cudamod show --json` says, variable by variable. Prints one line per
difference and exits 1 when there is one.

show-parity.py --manifest FILE: the same for many cases in one run, each
line of FILE tab-separated: WHAT BASE.env LOAD.env SHOW.json; a case that
differs is printed as "WHAT differs from module load:" and its lines."""
import json
import sys

sys.dont_write_bytecode = True  # nothing written beside the sources
from envsnap import BOOKKEEPING, snapshot  # noqa: E402


def compare(base_env, load_env, show_json, out):
    """Print the differences to out (a list of lines); 1 if there is one."""
    # show --json carries a byte that is not UTF-8 as U+FFFD.
    base, load = snapshot(base_env, 'replace'), snapshot(load_env, 'replace')
    with open(show_json) as f:
        show = json.load(f)
    assert show['cudamod'] == 'show' and show['format'] == 1, 'not a show document'
    tool = {}
    for k in set(base) | set(load):
        if BOOKKEEPING.match(k) or base.get(k) == load.get(k):
            continue
        tool[k] = load.get(k)  # None: unset
    ours = {}
    for v in show['environment']:
        ours[v['name']] = None if v['action'] == 'unset' else v['value']
        if v['action'] == 'path':
            # The parts must make the value: prepend + old + append.
            old = base.get(v['name'], '')
            parts = v['prepend'] + ([old] if old else []) + v['append']
            if ':'.join(parts) != v['value']:
                out.append(f"  {v['name']}: prepend/append {parts} do not make the value {v['value']!r}")
                return 1
    bad = 0
    for k in sorted(set(tool) | set(ours)):
        if tool.get(k, '<absent>') != ours.get(k, '<absent>'):
            out.append(f"  {k}: the tool gives {tool.get(k, '(unchanged)')!r}, show gives {ours.get(k, '(unchanged)')!r}")
            bad = 1
    return bad


def main():
    if sys.argv[1] == '--manifest':
        bad = 0
        with open(sys.argv[2]) as f:
            for line in f:
                what, base_env, load_env, show_json = line.rstrip('\n').split('\t')
                out = []
                if compare(base_env, load_env, show_json, out):
                    print(f'{what} differs from module load:')
                    print('\n'.join('  ' + o for o in out))
                    bad = 1
        return bad
    out = []
    bad = compare(sys.argv[1], sys.argv[2], sys.argv[3], out)
    if out:
        print('\n'.join(out))
    return bad


if __name__ == '__main__':
    sys.exit(main())
