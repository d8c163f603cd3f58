"""load_inline.py DIR [cu-only|import-only]: build a small CUDA extension
with torch.utils.cpp_extension.load_inline (compile, link, import; the
kernel is not run) and write DIR/torch.json: torch's CUDA_HOME, whether the
build loaded, and its build.ninja's nvcc and -ccbin. With cu-only, the
kernel alone with cpp_extension.load (no torch/extension.h to compile:
60-80 s less), loaded as a library; with import-only, no build: CUDA_HOME
alone (what importing cpp_extension decides)."""
import json
import os
import re
import sys

import torch
import torch.utils.cpp_extension as ext

out = sys.argv[1]
cuda = r"""
#include <cmath>
__global__ void scale(float *x, float a, int n)
{
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n)
                x[i] = a * sinpif(x[i]);
}
void launch_scale(float *x, float a, int n)
{
        scale<<<(n + 255) / 256, 256>>>(x, a, n);
}
"""
cpp = r"""
void launch_scale(float *x, float a, int n);
void scale_(torch::Tensor x, double a)
{
        launch_scale(x.data_ptr<float>(), (float)a, (int)x.numel());
}
"""
res = {"cuda_home": ext.CUDA_HOME, "torch_cuda": torch.version.cuda, "loaded": False}
try:
    if sys.argv[2:] == ["import-only"]:
        pass
    elif sys.argv[2:] == ["cu-only"]:
        src = os.path.join(out, "kernel.cu")
        open(src, "w").write(cuda)
        ext.load("cudamod_probe", [src], is_python_module=False, verbose=True)
        res["loaded"] = True
    else:
        m = ext.load_inline("cudamod_probe", cpp_sources=cpp, cuda_sources=cuda, functions=["scale_"],
                            verbose=True)
        res["loaded"] = hasattr(m, "scale_")
except Exception as e:  # the build's failure is the result
    res["error"] = str(e)[-2000:]
ninja = os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "cudamod_probe", "build.ninja")
try:
    text = open(ninja).read()
    n = re.search(r"^nvcc = (\S+)", text, re.M)
    cc = re.search(r"^cuda_cflags = -ccbin (\S+)", text, re.M)
    res["nvcc"] = n.group(1) if n else None
    res["ccbin"] = cc.group(1) if cc else None
except OSError:
    pass
json.dump(res, open(os.path.join(out, "torch.json"), "w"), indent=1)
print(json.dumps(res, indent=1))
