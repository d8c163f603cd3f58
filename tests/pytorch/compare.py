#!/usr/bin/env python3
"""compare.py RESULTS: for each environment directory under RESULTS (from
configure.sh: doctor.json, doctor.rc, configure.rc, configure.log,
CMakeCache.txt), set what PyTorch's configure found, picked and failed on
against what `cudamod doctor --build --json` predicted, component by
component, print the table (environment x component: agree / expected /
pending / DISAGREE / -) and exit 1 on any DISAGREE.

MAPPING is the one place that ties doctor's JSON to CMake's cache: a
component's doctor name, and the cache variables of its pick (a path each:
compared by their real paths). The columns: verdict (the configure
stops, or not, where doctor says it does), findings (a configure that
passed: doctor's problems beyond a USE_* going off), then one per
component. EXPECTED lists, by doctor's finding id, the refusals the project
decides are right (PyTorch's CMake is wrong or unsafe), with the reason
(doc/guide.md has them too). A configure ended by stop.cmake passed. PENDING lists the ones doctor gets wrong
today, each with the work that fixes it: they are reported, not failed,
and go when that work lands.
"""
import json
import os
import re
import sys

# component: (doctor's component name, which file of it: "library" or
# "header", CMakeCache variables, any of which holds CMake's pick).
MAPPING = {
    "toolkit": ("toolkit", "prefix", ["CUDAToolkit_ROOT_DIR", "CUDA_TOOLKIT_ROOT_DIR"]),
    "nvcc": ("nvcc", "library", ["CMAKE_CUDA_COMPILER"]),
    "host-compiler": ("host-compiler", "library", ["CMAKE_CUDA_HOST_COMPILER"]),
    "cudart": ("cudart", "library", ["CUDA_cudart_LIBRARY"]),
    "cudnn": ("cudnn", "library", ["CUDNN_LIBRARY_PATH", "CUDNN_LIBRARY"]),
    "nccl": ("nccl", "library", ["NCCL_LIBRARIES", "NCCL_LIBRARY"]),
    "magma": ("magma", "library", ["MAGMA_LIBRARIES"]),
    "cusparselt": ("cusparselt", "library", ["CUSPARSELT_LIBRARY_PATH"]),
}
# The configure's verdict against doctor's: doctor predicts a stop when it
# has a fatal finding (status "fatal", exit 3).
def doctor_predicts_stop(d):
    return d.get("status") == "fatal"

# Differences the project decides are right, by doctor's finding id: a
# configure that passes while doctor refuses the build for that finding.
EXPECTED = {
    "cuda-major":
        "PyTorch's FindCUDNN takes a cuDNN for CUDA 13 (CUDNN_ROOT, or "
        "/usr/local/cuda's through the default places) beside CUDA 12.4 and "
        "the configure passes; doctor refuses it: the torch built loads CUDA "
        "13's libraries beside CUDA 12's (doc/guide.md)",
}
# Known today, each with the work that fixes it: (environment, column).
# Fixed by doctor --build's fatal findings and its CUDA compiler
# identification compile (the issue's "doctor --build predicts the fatal
# ones", helper i4), or new (found by this test, not assigned yet).
PENDING = {
}


def cache(path):
    vals = {}
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line.rstrip("\n"))
                if m:
                    vals[m.group(1)] = m.group(2)
    except OSError:
        pass
    return vals


def real(p):
    if not p or p.endswith("-NOTFOUND"):
        return None
    p = p.split(";")[0]
    return os.path.realpath(p)


def fatal_message(log):
    try:
        text = open(log, errors="replace").read()
    except OSError:
        return None
    m = re.search(r"CMake Error at [^\n]*\n((?:  [^\n]*\n|\n)+?)(?:Call Stack|\n\S)", text)
    if not m:
        return None
    return " ".join(m.group(1).split())[:160]


def doctor_pick(c, which):
    if c is None or c.get("state") != "found":
        return None
    if which == "prefix":
        return real(c.get("prefix"))
    f = c.get(which) or {}
    return real(f.get("path"))


def main():
    results = sys.argv[1]
    rows = []
    bad = 0
    cols = ["verdict", "findings"] + list(MAPPING)
    for name in sorted(os.listdir(results)):
        d_dir = os.path.join(results, name)
        try:
            doc = json.load(open(os.path.join(d_dir, "doctor.json")))
        except (OSError, ValueError) as e:
            print(f"{name}: no doctor JSON ({e})")
            bad += 1
            continue
        rc = int(open(os.path.join(d_dir, "configure.rc")).read().strip() or 1)
        cc = cache(os.path.join(d_dir, "CMakeCache.txt"))
        # CMake keeps the CUDA host compiler in CMakeFiles/<version>/
        # CMakeCUDACompiler.cmake, not in the cache.
        try:
            m = re.search(r'^set\(CMAKE_CUDA_HOST_COMPILER "([^"]*)"\)',
                          open(os.path.join(d_dir, "CMakeCUDACompiler.cmake")).read(), re.M)
            if m:
                cc["CMAKE_CUDA_HOST_COMPILER"] = m.group(1)
        except OSError:
            pass
        comps = {c["name"]: c for c in doc.get("components", [])}
        row = {}
        notes = []

        def judge(comp, ok, detail):
            nonlocal bad
            if ok and (name, comp) in PENDING:
                row[comp] = "STALE"
                notes.append(f"  {comp}: agrees now: remove its PENDING entry")
                bad += 1
            elif ok:
                row[comp] = "agree"
            elif (name, comp) in PENDING:
                row[comp] = "pending"
                notes.append(f"  {comp}: pending: {PENDING[(name, comp)]} ({detail})")
            else:
                row[comp] = "DISAGREE"
                notes.append(f"  {comp}: DISAGREE: {detail}")
                bad += 1

        # stop.cmake ends every configure that gets past the CUDA parts
        # with its own fatal error: that one is a pass.
        msg = fatal_message(os.path.join(d_dir, "configure.log"))
        stop = rc != 0 and not (msg or "").startswith("cudamod-stop:")
        pred = doctor_predicts_stop(doc)
        judge("verdict", stop == pred,
              f"configure exit {rc} ({msg or 'no fatal message'}); "
              f"doctor {'predicts' if pred else 'does not predict'} a stop (status {doc.get('status')})")
        # A configure that passed: each problem doctor finds beyond a USE_*
        # going off (which the configure does too) is an expected refusal
        # or a disagreement.
        if stop:
            row["findings"] = "-"
        else:
            ids = sorted({f.get("id") for f in doc.get("findings", [])} - {"option-off"})
            if not ids:
                row["findings"] = "agree"
            for i in ids:
                if i in EXPECTED:
                    row["findings"] = "expected"
                    notes.append(f"  findings: expected: {i}: {EXPECTED[i]}")
                else:
                    judge("findings", False, f"the configure passes, doctor finds '{i}'")
        for comp, (dname, which, vars_) in MAPPING.items():
            picks = [real(cc.get(v)) for v in vars_ if v in cc]
            reached = any(v in cc for v in vars_)
            if not reached:
                row[comp] = "-"  # the configure stopped before it
                continue
            cm = next((p for p in picks if p), None)
            dp = doctor_pick(comps.get(dname), which)
            if comp == "toolkit" and cm and dp is None and comps.get(dname, {}).get("library"):
                dp = real(os.path.dirname(os.path.dirname(comps[dname]["library"]["path"])))
            judge(comp, cm == dp, f"cmake {cm or 'not found'}, doctor {dp or 'not found'}")
        rows.append((name, row, notes))
    w = max([len(r[0]) for r in rows] + [11])
    print("environment".ljust(w), " ".join(c[:13].ljust(13) for c in cols))
    for name, row, _ in rows:
        print(name.ljust(w), " ".join(row.get(c, "?").ljust(13) for c in cols))
    for name, _, notes in rows:
        if notes:
            print(f"{name}:")
            print("\n".join(notes))
    counts = {}
    for _, row, _ in rows:
        for v in row.values():
            counts[v] = counts.get(v, 0) + 1
    print("totals:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
