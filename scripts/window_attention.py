#!/usr/bin/env python3
# Does a sliding window save attention time in proportion to the key blocks it skips, and
# is a tanh score cap free inside a fused attention kernel? dsplan prices a windowed flash
# layer at the fraction of (128 x 128) key blocks the window leaves, and Gemma 2's score cap
# as free inside FlashAttention (docs/model.md §4, "Attention"). The lent GPU machine has no
# flash-attn package, so this times PyTorch's FlexAttention, a block-sparse fused kernel
# that skips the blocks a block mask leaves out, against SDPA's flash kernel (causal) and
# SDPA given the window as a boolean mask (which no flash kernel takes). Forward and
# forward + backward, CUDA events (scripts/cuda_timing.py). One JSON line per case with the
# block mask's density where there is one.
# Usage: window_attention.py [--seq 16384] [--heads 16] [--head-dim 128] [--window 4096]
import argparse
import json

import torch
import torch.nn.functional as F

from cuda_timing import time_op


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", type=int, default=16384)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--window", type=int, nargs="+", default=[4096, 1024])
    ap.add_argument("--softcap", type=float, default=50.0)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    s, hd, r = a.seq, a.head_dim, a.repeats
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "seq": s, "heads": a.heads, "head_dim": hd}), flush=True)
    q, k, v = (torch.randn(1, a.heads, s, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    g = torch.randn(1, a.heads, s, hd, device="cuda", dtype=torch.bfloat16)
    flex = torch.compile(flex_attention)

    def run(case, fn, density=None):
        try:
            with torch.no_grad():
                t_f = time_op(fn, r, warmup=2)
            t_fb = time_op(lambda: torch.autograd.grad(fn(), (q, k, v), g), r, warmup=2)
            print(json.dumps({"case": case, "fwd_ms": round(t_f * 1e3, 3), "fwd_bwd_ms": round(t_fb * 1e3, 3),
                              "block_density": density}), flush=True)
        except Exception as e:
            print(json.dumps({"case": case, "error": repr(e)[:300]}), flush=True)

    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        run("sdpa_flash_causal", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))

    def causal(b, h, qi, ki):
        return qi >= ki

    bm = create_block_mask(causal, None, None, s, s)
    dens = lambda m: round(1.0 - m.sparsity() / 100.0, 4)
    run("flex_causal", lambda: flex(q, k, v, block_mask=bm), dens(bm))
    cap = a.softcap

    def softcap(score, b, h, qi, ki):
        return cap * torch.tanh(score / cap)

    run("flex_causal_softcap", lambda: flex(q, k, v, score_mod=softcap, block_mask=bm), dens(bm))
    for w in a.window:
        def windowed(b, h, qi, ki, w=w):
            return (qi >= ki) & (qi - ki < w)

        bw = create_block_mask(windowed, None, None, s, s)
        run(f"flex_window{w}", lambda: flex(q, k, v, block_mask=bw), dens(bw))
    # SDPA with the window as a boolean mask: no flash kernel takes a mask.
    w = a.window[0]
    i = torch.arange(s, device="cuda")
    keep = (i[:, None] >= i[None, :]) & (i[:, None] - i[None, :] < w)
    run(f"sdpa_mask_window{w}", lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=keep))


if __name__ == "__main__":
    main()
