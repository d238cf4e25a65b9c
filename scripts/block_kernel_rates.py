#!/usr/bin/env python3
# The memory-bound kernels of a transformer block that dsplan still prices at the blended
# HBM rate on Hopper (docs/model.md §4, "Memory-bound kernels by class"): LayerNorm and
# RMSNorm forward and backward, the reference workload's rotary embedding, SwiGLU's
# silu-times-gate, tanh GELU's backward, torch's cross-entropy and the AdamW step. Each is
# run as examples/gpt_model.py runs it: under bf16 autocast, on the fp32 residual stream
# for the norms, on 16-bit linear outputs for rotary and the activations. Times are CUDA
# events (median of 3 batches after warm-up, scripts/cuda_timing.py); a backward is one
# torch.autograd.grad call (every kernel of the backward, the weight-gradient reductions
# too). One JSON line per case: elements, microseconds and the rate in elements per ns;
# bytes are left to the reader's model (docs/accuracy.md counts dsplan's bytes for each).
# Usage: block_kernel_rates.py [--tokens 32768] [--repeats 10]
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

from cuda_timing import time_op

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from gpt_model import rope as workload_rope  # noqa: E402  the reference workload's own


def rope(x, seq):
    return workload_rope(torch, x, seq)


def emit(case, elems, t, **extra):
    print(json.dumps({"case": case, "elements": elems, "us": round(t * 1e6, 1),
                      "Gelem_per_s": round(elems / t / 1e9, 2), **extra}), flush=True)


def fwd_bwd(case, elems, make_inputs, fn, repeats):
    """Times fn forward (no graph kept) and its backward through autograd.grad."""
    try:
        ins = make_inputs()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                t_f = time_op(lambda: fn(*ins), repeats, warmup=3)
            out = fn(*ins)
        g = torch.randn_like(out)
        leaves = [t for t in ins if t.requires_grad]
        t_b = time_op(lambda: torch.autograd.grad(out, leaves, g, retain_graph=True), repeats, warmup=3)
        emit(case + "_fwd", elems, t_f, out_dtype=str(out.dtype))
        emit(case + "_bwd", elems, t_b)
    except Exception as e:  # keep the other cases
        print(json.dumps({"case": case, "error": repr(e)[:300]}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=32768)
    ap.add_argument("--repeats", type=int, default=10)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("block_kernel_rates.py: no CUDA device")
    dev = torch.cuda.get_device_name()
    print(json.dumps({"device": dev, "torch": torch.__version__, "sms":
                      torch.cuda.get_device_properties(0).multi_processor_count}), flush=True)
    T, r = a.tokens, a.repeats

    def resid(h):  # the fp32 residual stream, a leaf that wants its gradient
        return lambda: [torch.randn(T, h, device="cuda", requires_grad=True)]

    for h in (768, 2048, 4096):
        ln = torch.nn.LayerNorm(h, device="cuda")
        fwd_bwd(f"layernorm_h{h}", T * h, resid(h), ln, r)
        rms = torch.nn.RMSNorm(h, device="cuda")
        fwd_bwd(f"rmsnorm_h{h}", T * h, resid(h), rms, r)
    for heads, d, s in ((32, 64, 2048), (32, 128, 4096)):
        b = max(1, T // s)
        mk = lambda: [torch.randn(b, heads, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)]
        fwd_bwd(f"rope_d{d}", b * heads * s * d, mk, lambda x: rope(x, s), r)
    for f in (3072, 8192):
        mk = lambda: [torch.randn(T, f, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                      for _ in range(2)]
        fwd_bwd(f"swiglu_f{f}", T * f, mk, lambda a_, g_: F.silu(a_) * g_, r)
        mk1 = lambda: [torch.randn(T, f, device="cuda", dtype=torch.bfloat16, requires_grad=True)]
        fwd_bwd(f"gelu_tanh_f{f}", T * f, mk1, lambda a_: F.gelu(a_, approximate="tanh"), r)
    for v in (50304, 128256):
        n = max(1024, (T // 8) // 1024 * 1024) if v > 60000 else T // 4
        mk = lambda: [torch.randn(n, v, device="cuda", dtype=torch.bfloat16, requires_grad=True)]
        tgt = torch.randint(v, (n,), device="cuda")
        fwd_bwd(f"cross_entropy_v{v}", n * v, mk, lambda x: F.cross_entropy(x.float(), tgt), r)
    # AdamW over fp32 parameters: 1.07e9 elements in 64 tensors, torch's default (foreach)
    # and fused=True. Per element the step reads param, grad, exp_avg, exp_avg_sq and writes
    # param, exp_avg, exp_avg_sq: 28 bytes.
    for fused in (False, True):
        try:
            params = [torch.zeros(2 ** 24, device="cuda", requires_grad=True) for _ in range(64)]
            for p in params:
                p.grad = torch.randn_like(p)
            opt = torch.optim.AdamW(params, lr=1e-4, fused=fused, foreach=None if fused else True)
            t = time_op(opt.step, r, warmup=2)
            emit("adamw_fused" if fused else "adamw_foreach", 64 * 2 ** 24, t, bytes_per_element=28)
            del params, opt
            torch.cuda.empty_cache()
        except Exception as e:
            print(json.dumps({"case": f"adamw fused={fused}", "error": repr(e)[:300]}), flush=True)


if __name__ == "__main__":
    main()
