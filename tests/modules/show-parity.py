#!/usr/bin/env python3
"""show-parity.py BASE.env LOAD.env SHOW.json: compare what the real tool did
(two `env -0` snapshots, before and after `module load`) with what
`cudamod show --json` says, variable by variable. Prints one line per
difference and exits 1 when there is one."""
import json
import re
import sys

BOOKKEEPING = re.compile(r'^(_ModuleTable[0-9]*_|_ModuleTable_Sz_|__LMOD_.*|LMOD_.*|_LMFILES_|'
                         r'LOADEDMODULES|__MODULES_.*|MODULES_.*|BASH_FUNC_.*|_|SHLVL|PWD|OLDPWD)$')


def snapshot(path):
    env = {}
    with open(path, 'rb') as f:
        for item in f.read().split(b'\0'):
            if b'=' in item:
                k, v = item.split(b'=', 1)
                env[k.decode('utf-8', 'replace')] = v.decode('utf-8', 'replace')
    return env


def main():
    base, load = snapshot(sys.argv[1]), snapshot(sys.argv[2])
    with open(sys.argv[3]) as f:
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
                print(f"  {v['name']}: prepend/append {parts} do not make the value {v['value']!r}")
                return 1
    bad = 0
    for k in sorted(set(tool) | set(ours)):
        if tool.get(k, '<absent>') != ours.get(k, '<absent>'):
            print(f"  {k}: the tool gives {tool.get(k, '(unchanged)')!r}, show gives {ours.get(k, '(unchanged)')!r}")
            bad = 1
    return bad


if __name__ == '__main__':
    sys.exit(main())
