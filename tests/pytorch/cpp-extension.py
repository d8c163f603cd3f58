#!/usr/bin/env python3
"""cpp-extension.py DIR: for DIR/patched and DIR/unpatched (from
cpp-extension.sh: doctor.json, torch.json, build.log), check that
load_inline built and loaded the extension where doctor --build predicts no
stop; that the real CUDA 12.4 builds too, where doctor refuses the build
with its fatal glibc-math finding (right for setup.py's CMake, whose CUDA
compiler identification fails; cpp_extension passes -isystem
CUDA_HOME/include, and in a system header nvcc lets the clash pass: the
expected difference, doc/guide.md); and that doctor's toolkit, nvcc and host compiler are the
ones cpp_extension used (real paths; the host compiler by GCC version, as
cpp_extension passes CC (gcc-12) to -ccbin where CMake takes CUDAHOSTCXX
(g++-12)). Prints one line a check, exit 1 on any failure."""
import json
import os
import subprocess
import sys

bad = 0


def check(name, ok, what):
    global bad
    print(f"{name}: {'ok' if ok else 'FAIL'}: {what}")
    bad += not ok


def real(p):
    return os.path.realpath(p) if p else None


def pick(doc, comp, which):
    c = next((c for c in doc.get("components", []) if c["name"] == comp), None)
    if c is None or c.get("state") != "found":
        return None
    return real(c.get("prefix") if which == "prefix" else (c.get(which) or {}).get("path"))


def gcc_version(p):
    try:
        return subprocess.run([p, "-dumpfullversion"], capture_output=True, text=True).stdout.strip() or None
    except OSError:
        return None


def main():
    top = sys.argv[1]
    for name in ("patched", "unpatched"):
        d = os.path.join(top, name)
        try:
            doc = json.load(open(os.path.join(d, "doctor.json")))
            tj = json.load(open(os.path.join(d, "torch.json")))
        except (OSError, ValueError) as e:
            check(name, False, f"no result ({e})")
            continue
        log = open(os.path.join(d, "build.log"), errors="replace").read()
        ids = {f.get("id") for f in doc.get("findings", []) if f.get("severity") == "fatal"}
        fatal = doc.get("status") == "fatal"
        if name == "patched":
            check(name, tj["loaded"] and not fatal,
                  f"load_inline {'built and loaded' if tj['loaded'] else 'failed'}; doctor status {doc.get('status')}")
        else:
            clash = "exception specification is incompatible" in log
            check(name, tj["loaded"] and fatal and ids == {"glibc-math"},
                  f"cpp_extension.load {'built and loaded' if tj['loaded'] else 'failed'}"
                  f"{' on sinpi/cospi' if clash else ''}; doctor status {doc.get('status')}, "
                  f"fatal findings {sorted(i for i in ids if i)} (expected: glibc-math, setup.py's CMake stops)")
        t = pick(doc, "toolkit", "prefix")
        check(name, real(tj["cuda_home"]) == t, f"toolkit: cpp_extension CUDA_HOME {real(tj['cuda_home'])}, doctor {t}")
        n = pick(doc, "nvcc", "library")
        check(name, real(tj.get("nvcc")) == n, f"nvcc: build.ninja {real(tj.get('nvcc'))}, doctor {n}")
        h = pick(doc, "host-compiler", "library")
        cc = tj.get("ccbin")
        hv, cv = gcc_version(h) if h else None, gcc_version(cc) if cc else None
        check(name, hv is not None and hv == cv,
              f"host compiler: build.ninja -ccbin {cc} (gcc {cv}), doctor {h} (gcc {hv})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
