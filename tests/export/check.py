#!/usr/bin/env python3
"""check.py spack|easybuild FILE TREE: read an export of TREE (a directory
`cudamod generate` wrote) as Spack or EasyBuild reads it, and check it
against the tree's index. Exit 1 with the reasons on stderr."""
import configparser
import json
import os
import re
import sys

# The part of Spack's packages.yaml schema an external uses
# (lib/spack/spack/schema/packages.py, spack v0.16 to v1.0): packages is an
# object of package names (r"\w[\w-]*"), each an object whose `buildable`
# is a boolean and whose `externals` is an array of objects with a string
# `spec` (required), a string `prefix` and `modules`, an array of strings.
PACKAGE_NAME = re.compile(r"\w[\w-]*")
SPACK_PACKAGES = {"cuda", "cudnn", "nccl", "cusparselt", "cudss", "nvshmem", "magma", "cutensor"}
# EasyBuild's names of the software (its easyconfigs' `name`).
EASYBUILD_NAMES = {"CUDA", "cuDNN", "NCCL", "cuSPARSELt", "cuDSS", "NVSHMEM", "magma", "cuTENSOR"}
# A spec as Spack's parser takes an external's: name@version, variants.
# CudaPackages whose `cuda` variant defaults to off (nccl and nvshmem
# conflict with ~cuda): an external without +cuda is a build without CUDA.
NEEDS_CUDA_VARIANT = {"nccl", "nvshmem", "magma"}
SPEC = re.compile(r"^([a-z][a-z0-9-]*)@([0-9A-Za-z._+-]+)((?: \+[a-z_]+)*)( cuda_arch=[0-9a-z]+(?:,[0-9a-z]+)*)?$")

problems = []


def problem(msg):
    problems.append(msg)


def index_modules(tree):
    with open(os.path.join(tree, ".cudamod-index.json")) as f:
        files = json.load(f)["files"]
    mods = {}
    for path, e in files.items():
        if e.get("module"):
            mods[e["module"]] = (path, e)
    return mods


def check_spack(doc, tree):
    mods = index_modules(tree)
    seen = set()
    if not isinstance(doc, dict) or set(doc) != {"packages"}:
        return problem("the document is not {packages: ...}")
    pkgs = doc["packages"]
    if not isinstance(pkgs, dict):
        return problem("packages is not an object")
    for name, pkg in pkgs.items():
        if not PACKAGE_NAME.fullmatch(name) or name not in SPACK_PACKAGES:
            problem(f"{name}: not a Spack builtin package of the stack")
        if not isinstance(pkg, dict) or set(pkg) - {"buildable", "externals"}:
            problem(f"{name}: not an object of buildable and externals")
            continue
        if pkg.get("buildable") is not False:
            problem(f"{name}: buildable is not false")
        exts = pkg.get("externals")
        if not isinstance(exts, list) or not exts:
            problem(f"{name}: externals is not a non-empty array")
            continue
        for ext in exts:
            if not isinstance(ext, dict) or not isinstance(ext.get("spec"), str):
                problem(f"{name}: an external without a string spec: {ext!r}")
                continue
            m = SPEC.match(ext["spec"])
            if not m or m.group(1) != name:
                problem(f"{name}: spec {ext['spec']!r} is not {name}@VERSION [+variant]")
            elif name in NEEDS_CUDA_VARIANT and "+cuda" not in m.group(3).split():
                problem(f"{name}: spec {ext['spec']!r} has no +cuda")
            elif m.group(4) and name not in NEEDS_CUDA_VARIANT:
                problem(f"{name}: spec {ext['spec']!r}: Spack's {name} has no cuda_arch variant")
            if not isinstance(ext.get("prefix"), str) or not os.path.isdir(ext["prefix"]):
                problem(f"{name}: prefix {ext.get('prefix')!r} is not a directory")
            mlist = ext.get("modules")
            if not isinstance(mlist, list) or not all(isinstance(x, str) for x in mlist) or not mlist:
                problem(f"{name}: modules is not an array of strings")
                continue
            own = mlist[-1]
            if own not in mods:
                problem(f"{name}: module {own} is not in the tree's index")
                continue
            path, e = mods[own]
            seen.add(own)
            if e["install"] != ext["prefix"]:
                problem(f"{name}: prefix {ext['prefix']} is not the install of {own} ({e['install']})")
            if m and e["identity"].split()[1] != m.group(2):
                problem(f"{name}: version {m.group(2)} is not the one of {own} ({e['identity']})")
            for mod in mlist[:-1]:
                if mod not in mods or not mods[mod][1]["identity"].startswith("cuda "):
                    problem(f"{name}: {mod}, loaded before {own}, is not a cuda module of the tree")
            if name != "cuda" and len(mlist) != 2:
                problem(f"{name}: {own} is not loaded after its CUDA's module: {mlist}")
    for mod, (path, e) in mods.items():
        if mod not in seen and e.get("kind") != "runtime":
            problem(f"module {mod} ({path}) has no external")


def check_easybuild(path, tree):
    mods = index_modules(tree)
    # EasyBuild reads the file with ConfigObj (easyconfig.py): '#' starts a
    # comment, ',' makes a list, a quote starts a quoted value; the export
    # writes none of them into a value, so configparser reads it the same.
    with open(path) as f:
        text = f.read()
    for line in text.splitlines():
        if "=" in line and re.search(r"[,#\"']", line.split("=", 1)[1]):
            problem(f"a value ConfigObj would read otherwise: {line!r}")
    cp = configparser.ConfigParser(interpolation=None, delimiters=("=",), comment_prefixes=("#",))
    cp.optionxform = str
    cp.read_string(text)
    seen = set()
    for sec in cp.sections():
        keys = set(cp[sec])
        if keys != {"name", "version", "prefix"}:
            problem(f"[{sec}]: keys {sorted(keys)}, not name, version, prefix")
            continue
        if sec not in mods:
            problem(f"[{sec}]: not a module of the tree")
            continue
        seen.add(sec)
        _, e = mods[sec]
        if cp[sec]["name"] not in EASYBUILD_NAMES:
            problem(f"[{sec}]: name {cp[sec]['name']} is not EasyBuild's")
        if cp[sec]["version"] != e["identity"].split()[1]:
            problem(f"[{sec}]: version {cp[sec]['version']} is not the install's")
        if cp[sec]["prefix"] != e["install"] or not os.path.isdir(cp[sec]["prefix"]):
            problem(f"[{sec}]: prefix {cp[sec]['prefix']} is not the install {e['install']}")
    for mod, (p, e) in mods.items():
        if mod not in seen and e.get("kind") != "runtime":
            problem(f"module {mod} ({p}) has no section")


def main():
    kind, path, tree = sys.argv[1:4]
    if kind == "spack":
        import yaml
        with open(path) as f:
            check_spack(yaml.safe_load(f), tree)
    else:
        check_easybuild(path, tree)
    for p in problems:
        print(f"check.py: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
