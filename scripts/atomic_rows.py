#!/usr/bin/env python3
"""Rows added into a tensor with atomics, as Megatron-Core's unfused MoE permutation does
(session 42): `scatter_add_` with an index expanded over the hidden dimension (its unpermute)
and `index_add_` (the backward of its row gather), in bf16 and fp32 (the unpermute adds in
fp32 when the routing probabilities are fp32), beside the row gather `index_select` of the
same rows. N = T x k copies of h elements go into T tokens, each token's k copies spread
over the whole range as routing leaves them.
Usage: atomic_rows.py OUT.json      Median of 20 after 5 warm-ups, CUDA events.
Exit status 3 without PyTorch or a GPU.
"""
import json
import sys

from cuda_timing import cuda_torch, time_each

SHAPES = [(4096, 8, 2048), (4096, 8, 7168), (16384, 2, 4096), (8192, 4, 2880)]  # (T, k, h)


def timed(fn):
    """Microseconds a launch: the median of 20 after 5 warm-ups."""
    return time_each(fn, repeats=20, warmup=5) * 1e6


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: atomic_rows.py OUT.json")
    torch = cuda_torch("atomic_rows")
    props = torch.cuda.get_device_properties(0)
    result = {"device": props.name, "sms": props.multi_processor_count, "torch": torch.__version__, "rows": []}
    for T, k, h in SHAPES:
        n = T * k
        torch.manual_seed(0)
        token_of = torch.randperm(n, device="cuda") // k  # copy -> token, in a routed order
        for dtype in (torch.bfloat16, torch.float32):
            src = torch.randn(n, h, device="cuda", dtype=dtype)
            x = torch.randn(T, h, device="cuda", dtype=dtype)
            out = torch.zeros(T, h, device="cuda", dtype=dtype)
            expanded = token_of.unsqueeze(1).expand(-1, h)
            r = {"tokens": T, "topk": k, "hidden": h, "dtype": str(dtype).replace("torch.", ""),
                 "index_add_us": timed(lambda: out.index_add_(0, token_of, src)),
                 "scatter_add_us": timed(lambda: out.scatter_add_(0, expanded, src)),
                 "index_select_us": timed(lambda: x.index_select(0, token_of))}
            r["elements"] = n * h
            for key in ("index_add_us", "scatter_add_us", "index_select_us"):
                r[key.replace("_us", "_Gelems_per_s")] = n * h / (r[key] * 1e-6) / 1e9
            result["rows"].append(r)
            print(json.dumps(r), flush=True)
            del src, x, out, expanded
            torch.cuda.empty_cache()
    with open(sys.argv[1], "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
