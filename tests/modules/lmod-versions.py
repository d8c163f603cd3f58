#!/usr/bin/env python3
"""lmod-versions.py MANIFEST: for each case of MANIFEST, the environment after
`module load` and after `module unload` under cudamod's own evaluator
(`cudamod show --json`) and under each Lmod, compared variable by variable.
Prints one line per difference, naming the case, the variable and every
value, and exits 1 when there is one.

MANIFEST lines, tab-separated:
  tools   LABEL...                     the Lmods, in the order of the cases' dirs
  case    NAME  SHOW.json  SHOW-RC  then per Lmod: BASE.env LOAD.rc LOAD.env UNLOAD.env

cudamod's column: after load, the base environment changed as show says;
after unload, each change undone: a variable show sets is unset, a path
variable loses the entries show prepends and appends, an unset stays
unset. A load that fails leaves the environment as it was, for Lmod as
for show. The modules loaded (dependencies included, in order) are
compared too, as the pseudo-variable "(loaded)": show's module list, Lmod's
LOADEDMODULES."""
import json
import sys

sys.dont_write_bytecode = True  # nothing written beside the sources
from envsnap import BOOKKEEPING, snapshot  # noqa: E402

LOADED = '(loaded)'
ABSENT = None


def visible(env, own_base=None, base=None):
    """The environment without the tools' bookkeeping, plus (loaded). With
    own_base (what this Lmod's init set up: MODULESHOME, FPATH, …) a variable
    still as it was there is taken as base's value: only what a module
    changed is compared."""
    out = {k: v for k, v in env.items() if not BOOKKEEPING.match(k)}
    if own_base is not None:
        for k, v in own_base.items():
            if BOOKKEEPING.match(k) or out.get(k) != v:
                continue
            if k in base:
                out[k] = base[k]
            else:
                del out[k]
    out[LOADED] = env.get('LOADEDMODULES', '')
    return out


def remove_once(entries, what, from_end):
    seq = list(reversed(entries)) if from_end else list(entries)
    for w in what:
        if w in seq:
            seq.remove(w)
    return list(reversed(seq)) if from_end else seq


def show_states(base, doc):
    """cudamod's environment after load and after unload."""
    load = dict(base)
    unload = dict(base)
    for v in doc['environment']:
        name = v['name']
        if v['action'] == 'unset':
            load.pop(name, None)
            unload.pop(name, None)
        elif v['action'] == 'set':
            # A setenv, or path entries on a variable that was unset:
            # unset again on unload.
            load[name] = v['value']
            unload.pop(name, None)
        elif v['action'] == 'path':
            load[name] = v['value']
            left = remove_once(remove_once(v['value'].split(':'), v['prepend'], False), v['append'], True)
            if left:
                unload[name] = ':'.join(left)
            else:
                unload.pop(name, None)
        else:
            raise ValueError('unknown action %r' % v['action'])
    load = visible(load)
    unload = visible(unload)
    load[LOADED] = ':'.join(m['module'] for m in doc['modules'])
    unload[LOADED] = ''
    return load, unload


def show_text(v):
    return '(unset)' if v is ABSENT else repr(v)


def main():
    tools = []
    bad = 0
    n = 0
    with open(sys.argv[1]) as f:
        for line in f:
            fields = line.rstrip('\n').split('\t')
            if fields[0] == 'tools':
                tools = fields[1:]
                continue
            name, show_json, show_rc = fields[1:4]
            rest = fields[4:]
            assert len(rest) == 4 * len(tools), line
            n += 1
            # show's base: the first Lmod's, without what its init set.
            bases = [snapshot(rest[4 * i]) for i in range(len(tools))]
            base = {k: v for k, v in bases[0].items() if all(b.get(k) == v for b in bases[1:])}
            columns = {}  # 'after load' -> [cudamod, Lmod...]
            if show_rc == '0':
                with open(show_json) as j:
                    doc = json.load(j)
                assert doc['cudamod'] == 'show' and doc['format'] == 1, 'not a show document'
                s_load, s_unload = show_states(base, doc)
            else:
                s_load = s_unload = visible(base)
            states = {'load': [('cudamod show', 'ok' if show_rc == '0' else 'refused', s_load)],
                      'unload': [('cudamod show', '', s_unload)]}
            for i, tool in enumerate(tools):
                _, rc_file, load_env, unload_env = rest[4 * i:4 * i + 4]
                with open(rc_file) as r:
                    rc = r.read().strip()
                states['load'].append((tool, 'ok' if rc == '0' else 'refused (rc %s)' % rc,
                                       visible(snapshot(load_env), bases[i], base)))
                states['unload'].append((tool, '', visible(snapshot(unload_env), bases[i], base)))
            # Whether each evaluator took the load.
            verdicts = [v for _, v, _ in states['load']]
            if len({v.split(' ')[0] for v in verdicts}) != 1:
                print('%s: load: %s' % (name, ', '.join('%s %s' % (t, v) for t, v, _ in states['load'])))
                bad = 1
            for when in ('load', 'unload'):
                cols = states[when]
                names = set()
                for _, _, env in cols:
                    names |= set(env)
                for var in sorted(names):
                    vals = [env.get(var, ABSENT) for _, _, env in cols]
                    if all(v == vals[0] for v in vals):
                        continue
                    print('%s: after %s: %s: %s' % (name, when, var,
                          '; '.join('%s %s' % (t, show_text(v)) for (t, _, _), v in zip(cols, vals))))
                    bad = 1
    print('%d cases compared under cudamod show and %s' % (n, ', '.join(tools)))
    return bad


if __name__ == '__main__':
    sys.exit(main())
