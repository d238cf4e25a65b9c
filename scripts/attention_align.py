#!/usr/bin/env python3
# How fast do the per-head attention GEMMs run when the head dimension is not a multiple of
# 8? docs/model.md §4.1 ("Misaligned attention GEMMs before Hopper") prices them at the fp32
# FMA rate before Hopper, read from BigScience's A100 pairs, and at 0.2 of the tensor rate
# on Hopper, which is measured only for plain GEMMs. This script measures it on the GPU at
# hand. It lays Q, K and V out as Megatron does (one QKV output [s, b, heads, 3d], split in
# the last dimension), then times Q K^T (baddbmm), P V (bmm) and their backward for each
# head dimension with CUDA events, and prints one JSON line per head dimension with its
# TFLOP/s and the ratio to the aligned head dimension of the same pair.
# Usage: attention_align.py [--heads 16] [--seq 2048] [--mbs 2] [--pairs 108:112,150:144]
import argparse
import json

import torch


def time_attention(heads, d, seq, mbs, dtype, repeats=20):
    qkv = torch.randn(seq, mbs, heads, 3 * d, device="cuda", dtype=dtype, requires_grad=True)
    q, k, v = torch.split(qkv, d, dim=-1)
    q = q.reshape(seq, mbs * heads, d)  # views with stride 3d between heads, as in Megatron
    k = k.reshape(seq, mbs * heads, d)
    v = v.reshape(seq, mbs * heads, d)
    scores = torch.empty(mbs * heads, seq, seq, device="cuda", dtype=dtype)

    def step():
        s = torch.baddbmm(scores, q.transpose(0, 1), k.transpose(0, 1).transpose(1, 2),
                          beta=0.0, alpha=d ** -0.5)
        ctx = torch.bmm(s, v.transpose(0, 1))
        ctx.sum().backward()

    for _ in range(3):
        step()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        step()
    end.record()
    torch.cuda.synchronize()
    seconds = start.elapsed_time(end) / 1e3 / repeats
    flops = 3 * 2 * (2.0 * mbs * heads * seq * seq * d)  # two GEMMs, forward + 2x backward
    return seconds, flops / seconds / 1e12


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--mbs", type=int, default=2)
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    ap.add_argument("--pairs", default="108:112,150:144,450:448")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("attention_align.py: no CUDA device")
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    for pair in a.pairs.split(","):
        odd, even = (int(x) for x in pair.split(":"))
        t_odd, r_odd = time_attention(a.heads, odd, a.seq, a.mbs, dtype)
        t_even, r_even = time_attention(a.heads, even, a.seq, a.mbs, dtype)
        print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                          "dtype": a.dtype, "heads": a.heads, "seq": a.seq, "mbs": a.mbs,
                          "d_misaligned": odd, "d_aligned": even,
                          "tflops_misaligned": round(r_odd, 1), "tflops_aligned": round(r_even, 1),
                          "rate_ratio": round(r_odd / r_even, 3),
                          "ms_misaligned": round(t_odd * 1e3, 3), "ms_aligned": round(t_even * 1e3, 3)}))


if __name__ == "__main__":
    main()
