#!/usr/bin/env python3
# Which memory-bound kernels reach the HBM rate, and which are held back by arithmetic?
# dsplan prices elementwise kernels as bytes over 0.8 of the datasheet HBM bandwidth
# (docs/model.md §4, "Memory-bound kernels"). On a GPU with fast HBM (H200: 4.8 TB/s) a
# kernel that does much arithmetic per byte, dropout's Philox random numbers for one, may
# no longer be memory-bound. This script times PyTorch's own kernels on one large bf16
# tensor with CUDA events (median of 3 batches of launches after warm-up) and prints one
# JSON line per kernel: its time, the bytes it must move (read + write, as dsplan counts
# them) and the rate those bytes imply. --rows sets the softmax row length (GPT-2's
# sequence, 1024, for the s x s attention scores of standard attention).
# Usage: elementwise_rates.py [--mib 1024] [--rows 1024] [--repeats 10]
import argparse
import json

import torch

from cuda_timing import time_op


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--rows", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=10)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("elementwise_rates.py: no CUDA device")
    n = a.mib * 2 ** 20 // 2
    n -= n % (a.rows * a.rows)
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    scores = x.view(-1, a.rows, a.rows)
    causal = torch.ones(a.rows, a.rows, device="cuda", dtype=torch.bool).tril()
    neg = torch.tensor(torch.finfo(torch.bfloat16).min, device="cuda", dtype=torch.bfloat16)
    g = y.view(-1, a.rows, a.rows)
    sm = torch.softmax(scores, -1)
    mask8 = torch.rand(n, device="cuda") > 0.1
    e = 2  # bytes per bf16 element
    kernels = [
        # name, function, bytes moved per element (read + write)
        ("copy", lambda: x.clone(), 2 * e),
        ("add", lambda: x + y, 3 * e),
        ("gelu_tanh", lambda: torch.nn.functional.gelu(x, approximate="tanh"), 2 * e),
        ("dropout_fwd", lambda: torch.ops.aten.native_dropout(x, 0.1, True), 2 * e + 1),
        ("dropout_bwd", lambda: torch.ops.aten.native_dropout_backward(y, mask8, 1 / 0.9), 2 * e + 1),
        ("rand_mask_only", lambda: torch.rand(n, device="cuda") > 0.1, 1),
        ("softmax_fwd", lambda: torch.softmax(scores, -1), 2 * e),
        ("softmax_bwd", lambda: torch.ops.aten._softmax_backward_data(g, sm, -1, torch.bfloat16), 3 * e),
        ("causal_where", lambda: torch.where(causal, scores, neg), 2 * e),
    ]
    dev = torch.cuda.get_device_name()
    for name, fn, bytes_per_elem in kernels:
        t = time_op(fn, a.repeats, warmup=3)
        print(json.dumps({"device": dev, "torch": torch.__version__, "kernel": name, "elements": n,
                          "us": round(t * 1e6, 1), "bytes_per_element": bytes_per_elem,
                          "GBps": round(n * bytes_per_elem / t / 1e9, 1),
                          "Gelem_per_s": round(n / t / 1e9, 1)}), flush=True)


if __name__ == "__main__":
    main()
