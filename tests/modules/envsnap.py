"""envsnap: what the module-tool tests' Python helpers share: an `env -0`
snapshot read into a dict, and the variables that are the tools' own
bookkeeping, not a module's doing."""
import re

BOOKKEEPING = re.compile(r'^(_ModuleTable[0-9]*_|_ModuleTable_Sz_|__LMOD_.*|LMOD_.*|_LMFILES_|'
                         r'LOADEDMODULES|__MODULES_.*|MODULES_.*|BASH_FUNC_.*|_|SHLVL|PWD|OLDPWD)$')


def snapshot(path, errors='surrogateescape'):
    """Bytes that are not UTF-8 are kept as surrogate escapes (print them
    with repr), or, with errors='replace', become U+FFFD, as they do in
    cudamod's JSON."""
    env = {}
    with open(path, 'rb') as f:
        for item in f.read().split(b'\0'):
            if b'=' in item:
                k, v = item.split(b'=', 1)
                env[k.decode('utf-8', errors)] = v.decode('utf-8', errors)
    return env
