#!/usr/bin/env python3
# How does a GEMM's rate grow with K, in FP8 against bf16? docs/model.md §4.1 prices the
# main loop's efficiency as K / (K + k_half), with k_half = 160 for Hopper's 16-bit GEMMs
# (fitted to XLA's published sm_90 kernel times) and 320 for FP8 (derived, not measured:
# the main loop runs twice as fast per K step while the epilogue writes the same 16-bit C
# tile). This script measures both on the GPU at hand: for square M = N and K from 128 to
# 16384 it times torch.matmul in bf16 and torch._scaled_mm in FP8 E4M3 (TN layout, bf16
# output, per-tensor scales: what cuBLASLt runs for Transformer Engine's linears) with CUDA
# events around a loop of launches, and prints one JSON line per shape. Then, per dtype and
# M = N, it fits rate(K) = R_inf * K / (K + k_half) by least squares over a k_half grid and
# prints one JSON line per fit. FP8 is timed with and without cuBLASLt's fast accumulation
# (Transformer Engine turns it on for forward GEMMs and off for the gradient GEMMs).
# --shapes times given M,N,K triples (a model's linears) in the same way, without a fit.
# Usage: fp8_gemm_k.py [--mn 4096,8192] [--ks 128,256,...] [--shapes M,N,K;...] [--repeats 30]
import argparse
import json

import torch

from cuda_timing import time_op


def fit_k_half(points):
    # points: [(k, rate)]; for a fixed k_half the best R_inf is a 1-D least-squares solve.
    best = None
    for k_half in range(0, 2049, 8):
        x = [k / (k + k_half) for k, _ in points]
        y = [r for _, r in points]
        r_inf = sum(a * b for a, b in zip(x, y)) / sum(a * a for a in x)
        rel = [(r_inf * a - b) / b for a, b in zip(x, y)]
        rms = (sum(e * e for e in rel) / len(rel)) ** 0.5
        if best is None or rms < best[2]:
            best = (k_half, r_inf, rms)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mn", default="4096,8192")
    ap.add_argument("--ks", default="128,256,512,1024,2048,4096,8192,16384")
    ap.add_argument("--shapes", default="")
    ap.add_argument("--repeats", type=int, default=30)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("fp8_gemm_k.py: no CUDA device")
    dev = torch.cuda.get_device_name()
    one = torch.tensor(1.0, device="cuda")
    series = {}
    shapes = [(mn, mn, k, mn, True) for mn in (int(x) for x in a.mn.split(",") if x)
              for k in (int(x) for x in a.ks.split(","))]
    shapes += [tuple(int(x) for x in s.split(",")) + (0, False) for s in a.shapes.split(";") if s]
    for m, n, k, mn, fit in shapes:
        x16 = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w16 = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)  # [N, K], as a linear's weight
        t16 = time_op(lambda: torch.matmul(x16, w16.t()), a.repeats)
        row = {"device": dev, "torch": torch.__version__, "m": m, "n": n, "k": k,
               "bf16_us": round(t16 * 1e6, 2), "bf16_tflops": round(2.0 * m * n * k / t16 / 1e12, 1)}
        try:
            x8 = x16.to(torch.float8_e4m3fn)
            w8 = w16.to(torch.float8_e4m3fn)
            t8 = time_op(lambda: torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one,
                                                  out_dtype=torch.bfloat16), a.repeats)
            t8f = time_op(lambda: torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one,
                                                   out_dtype=torch.bfloat16, use_fast_accum=True),
                          a.repeats)
            row.update({"fp8_us": round(t8 * 1e6, 2), "fp8_tflops": round(2.0 * m * n * k / t8 / 1e12, 1),
                        "fp8_over_bf16": round(t16 / t8, 3),
                        "fp8_fast_us": round(t8f * 1e6, 2),
                        "fp8_fast_tflops": round(2.0 * m * n * k / t8f / 1e12, 1),
                        "fp8_fast_over_bf16": round(t16 / t8f, 3)})
            if fit:
                series.setdefault(("fp8", mn), []).append((k, 2.0 * m * n * k / t8 / 1e12))
                series.setdefault(("fp8_fast", mn), []).append((k, 2.0 * m * n * k / t8f / 1e12))
        except (RuntimeError, AttributeError, TypeError) as e:  # no FP8 on this GPU or build
            row["fp8_error"] = str(e).splitlines()[0]
        if fit:
            series.setdefault(("bf16", mn), []).append((k, 2.0 * m * n * k / t16 / 1e12))
        print(json.dumps(row), flush=True)
        del x16, w16
    for (dtype, mn), points in sorted(series.items()):
        k_half, r_inf, rms = fit_k_half(points)
        print(json.dumps({"fit": dtype, "m": mn, "n": mn, "k_half": k_half,
                          "r_inf_tflops": round(r_inf, 1), "rms_rel_error": round(rms, 4)}), flush=True)


if __name__ == "__main__":
    main()
