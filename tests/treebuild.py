"""treebuild.py: write fake install trees with real ELF stub libraries, for
the scripts that build trees too big for the C fixtures (tests/stress/
mktree.py, bench/scan.sh). Each distinct stub is made once by
tests/mkelfstub, then copied; directories are created once.

    t = TreeBuilder(root, mkelfstub, stubs_dir)
    t.write("a/b.h", "text"); t.link("a/lib64", "lib")
    t.elf("a/bin/nvcc", strings=[...]); t.library("a/lib", "libcudart", "12", "12.4.127")
"""
import os
import shutil
import subprocess


class TreeBuilder:
    def __init__(self, root, mkelfstub, stubs_dir):
        self.root = root
        self.mkelfstub = mkelfstub
        self.stubs_dir = stubs_dir
        os.makedirs(stubs_dir, exist_ok=True)
        self.stubs = {}
        self.made = set()

    def path(self, rel):
        return os.path.join(self.root, rel)

    def mkdirs(self, d):
        if d in self.made:
            return
        os.makedirs(d, exist_ok=True)
        while d not in self.made and d != self.root:
            self.made.add(d)
            d = os.path.dirname(d)

    def write(self, rel, text):
        p = self.path(rel)
        self.mkdirs(os.path.dirname(p))
        with open(p, "w") as f:
            f.write(text)

    def link(self, rel, target):
        p = self.path(rel)
        self.mkdirs(os.path.dirname(p))
        if os.path.lexists(p):
            os.unlink(p)
        os.symlink(target, p)

    def elf(self, rel, soname=None, needed=(), strings=(), machine=None):
        """An ELF stub by mkelfstub: each distinct one is made once, then copied."""
        key = (soname, tuple(needed), tuple(strings), machine)
        src = self.stubs.get(key)
        if src is None:
            src = os.path.join(self.stubs_dir, "stub-%d-%d" % (os.getpid(), len(self.stubs)))
            args = [self.mkelfstub]
            if machine:
                args += ["--machine", machine]
            if soname:
                args += ["--soname", soname]
            for n in needed:
                args += ["--needed", n]
            for s in strings:
                args += ["--string", s]
            subprocess.run(args + [src], check=True)
            self.stubs[key] = src
        p = self.path(rel)
        self.mkdirs(os.path.dirname(p))
        shutil.copyfile(src, p)

    def library(self, d, stem, sover, full=None, needed=(), strings=()):
        """Like fx_library: the real file lib.so.FULL, the soname link and the
        dev link, or the soname file only (wheels) when full is None."""
        soname = "%s.so.%s" % (stem, sover)
        real = "%s.so.%s" % (stem, full) if full else soname
        self.elf(d + "/" + real, soname=soname, needed=needed, strings=strings)
        if full:
            self.link(d + "/" + soname, real)
            self.link(d + "/" + stem + ".so", soname)
