#!/usr/bin/env python3
# Does a flash kernel's rate rise with the sequence length as dsplan prices it? Since session
# 50 dsplan scales each kernel's 2048-token rate by E/(E + c*n): E the 128 x 128 score blocks
# the kernel runs per head, n its rows of blocks, c the fixed work of a row in blocks (0.6
# for FA2's and cuDNN's forward, 1 for FA3's, 2 for every backward; docs/model.md §4,
# "FlashAttention"). The constants were read off the FlashAttention-3 paper's H100 curves,
# which stop at 16k; the held-out rows that moved run 32K-256K (docs/accuracy.md, "Session
# 50"). This times PyTorch SDPA's flash and cuDNN backends, causal and not, at a fixed
# number of tokens per call (batch x sequence, the paper's 16k by default) from 1k to
# --max-seq, forward alone and forward + backward (CUDA events, scripts/cuda_timing.py),
# and prints one JSON line per case with the TFLOP/s in the paper's convention (a causal
# kernel's FLOPs counted as half the square) next to dsplan's rate for the same case,
# relative to its 2048-token value, so the two curves can be read side by side.
# Usage: flash_by_length.py [--tokens 16384] [--max-seq 131072] [--heads 16] [--head-dim 128]
import argparse
import json

from cuda_timing import cuda_torch, time_op

ROW_BLOCKS = {("flash", False): 0.6, ("cudnn", False): 0.6, ("flash", True): 2.0, ("cudnn", True): 2.0}


def dsplan_scaling(seq, causal, c):
    """dsplan's rate at `seq` over its 2048-token rate (estimator/time/operators.cc), in the
    printed TFLOP/s' convention: for a causal kernel dsplan counts the executed blocks,
    n(n + 1)/2, where the convention counts n^2/2."""
    n = -(-seq // 128)
    executed = n * (n + 1) / 2 if causal else n * n
    reference = 16 * 17 / 2 if causal else 256
    per_block = (executed / (executed + c * n)) / (reference / (reference + c * 16))
    return per_block * ((n / (n + 1)) / (16 / 17) if causal else 1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--max-seq", type=int, default=131072)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    if a.tokens < 1024 or a.max_seq < 1024 or a.heads < 1 or a.head_dim not in (64, 128, 256):
        raise SystemExit("flash_by_length: --tokens and --max-seq at least 1024, --heads >= 1, --head-dim 64/128/256")
    torch = cuda_torch("flash_by_length")
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "tokens": a.tokens, "heads": a.heads, "head_dim": a.head_dim}), flush=True)
    seq = 1024
    while seq <= a.max_seq:
        batch = max(1, a.tokens // seq)
        shape = (batch, a.heads, seq, a.head_dim)
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
        g = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
        full = 4.0 * batch * a.heads * seq * seq * a.head_dim  # one forward, every score
        for name, backend in backends.items():
            for causal in (True, False):
                case = {"backend": name, "seq": seq, "batch": batch, "causal": causal}
                try:
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
                    with sdpa_kernel(backend):
                        with torch.no_grad():
                            t_f = time_op(fn, a.repeats, warmup=2)
                        t_fb = time_op(lambda: torch.autograd.grad(fn(), (q, k, v), g), a.repeats, warmup=2)
                    counted = full / 2 if causal else full
                    t_b = max(t_fb - t_f, 1e-9)
                    case.update({"fwd_ms": round(t_f * 1e3, 3), "bwd_ms": round(t_b * 1e3, 3),
                                 "fwd_tflops": round(counted / t_f / 1e12, 1),
                                 "bwd_tflops": round(2.5 * counted / t_b / 1e12, 1),
                                 "dsplan_fwd_vs_2k": round(dsplan_scaling(seq, causal, ROW_BLOCKS[(name, False)]), 4),
                                 "dsplan_bwd_vs_2k": round(dsplan_scaling(seq, causal, ROW_BLOCKS[(name, True)]), 4)})
                except Exception as e:  # noqa: BLE001 - a backend that refuses a shape is a result
                    case["error"] = repr(e)[:300]
                print(json.dumps(case), flush=True)
        del q, k, v, g
        torch.cuda.empty_cache()
        seq *= 2


if __name__ == "__main__":
    main()
