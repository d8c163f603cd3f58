#!/usr/bin/env python3
"""cpp-extension.py DIR: for DIR/patched, DIR/unpatched and DIR/divergent
(from cpp-extension.sh: doctor.json, torch.json, build.log), check that
load_inline built and loaded the extension where doctor --build predicts no
stop; that the real CUDA 12.4 builds too, where doctor refuses the build
with its fatal glibc-math finding (right for setup.py's CMake, whose CUDA
compiler identification fails; cpp_extension passes -isystem
CUDA_HOME/include, and in a system header nvcc lets the clash pass: the
expected difference, doc/guide.md); and that doctor's "cpp_extension"
object (torch 2.6's own rules, not CMake's picks) is what cpp_extension
used: its CUDA_HOME, and build.ninja's nvcc and -ccbin, as strings. In
divergent (the patched module loaded, CUDA_HOME exported to the real
toolkit; no build, torch imported only) cpp_extension's CUDA_HOME is the
real toolkit, the configure's the module's, and doctor notes it. Prints
one line a check, exit 1 on any failure."""
import json
import os
import sys

bad = 0


def check(name, ok, what):
    global bad
    print(f"{name}: {'ok' if ok else 'FAIL'}: {what}")
    bad += not ok


def real(p):
    return os.path.realpath(p) if p else None


def pick(doc, comp):
    c = next((c for c in doc.get("components", []) if c["name"] == comp), None)
    if c is None or c.get("state") != "found":
        return None
    return c.get("prefix")


def main():
    top = sys.argv[1]
    for name in ("patched", "unpatched", "divergent"):
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
        x = doc.get("cpp_extension") or {}
        if name == "patched":
            check(name, tj["loaded"] and not fatal,
                  f"load_inline {'built and loaded' if tj['loaded'] else 'failed'}; doctor status {doc.get('status')}")
        elif name == "unpatched":
            clash = "exception specification is incompatible" in log
            check(name, tj["loaded"] and fatal and ids == {"glibc-math"},
                  f"cpp_extension.load {'built and loaded' if tj['loaded'] else 'failed'}"
                  f"{' on sinpi/cospi' if clash else ''}; doctor status {doc.get('status')}, "
                  f"fatal findings {sorted(i for i in ids if i)} (expected: glibc-math, setup.py's CMake stops)")
        check(name, tj["cuda_home"] == x.get("cuda_home"),
              f"CUDA_HOME: cpp_extension {tj['cuda_home']}, doctor {x.get('cuda_home')} (from {x.get('from')})")
        if name == "divergent":
            t = pick(doc, "toolkit")
            note = [n for n in doc.get("notes", []) if n.startswith("torch.utils.cpp_extension would use")]
            check(name, real(x.get("cuda_home")) != real(t) and x.get("from") == "CUDA_HOME" and len(note) == 1,
                  f"cpp_extension's CUDA_HOME {x.get('cuda_home')} (from {x.get('from')}), the configure's "
                  f"toolkit {t}, doctor's note: {note[0] if note else 'none'}")
            continue
        check(name, tj.get("nvcc") == x.get("nvcc"), f"nvcc: build.ninja {tj.get('nvcc')}, doctor {x.get('nvcc')}")
        check(name, tj.get("ccbin") == x.get("ccbin"),
              f"-ccbin: build.ninja {tj.get('ccbin')}, doctor {x.get('ccbin')}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
