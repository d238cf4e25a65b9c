#!/usr/bin/env python3
"""Dense bf16 GEMMs whose output tiles fill less than one wave of the GPU's SMs, beside shapes
that fill several, over the reduction length K (session 42): what cuBLAS does where a plain
tiling leaves SMs idle (split-K or stream-K), to compare with dsplan's wave and split-K
pricing (estimator/time/gemm.cc). The products are C[M,N] = A[M,K] B[K,N], as a linear's
weight gradient (out x in over the tokens) or a small projection runs them.
Usage: wave_fill_gemms.py OUT.json     Median of 20 launches after 5 warm-ups, CUDA events.
Exit status 3 without PyTorch or a GPU.
"""
import json
import sys

from cuda_timing import cuda_torch, time_each

OUTPUTS = [(256, 2048), (512, 2048), (768, 2048), (1024, 1024), (1024, 2048), (512, 4096), (1024, 4096),
           (2048, 2048), (2048, 4096), (4096, 4096), (8192, 4096)]
KS = [1024, 4096, 16384, 32768]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: wave_fill_gemms.py OUT.json")
    torch = cuda_torch("wave_fill_gemms")
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": []}
    for m, n in OUTPUTS:
        for k in KS:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            us = time_each(lambda: a @ b, repeats=20, warmup=5) * 1e6
            r = {"m": m, "n": n, "k": k, "us": us, "tflops": 2.0 * m * n * k / (us * 1e-6) / 1e12}
            result["rows"].append(r)
            print(json.dumps(r), flush=True)
            del a, b
    with open(sys.argv[1], "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
