#!/usr/bin/env python3
"""The expert GEMMs of a mixture-of-experts layer, one by one, as a grouped GEMM
(torch._grouped_mm), as a batched GEMM (torch.bmm) and as one dense GEMM of the same FLOPs
(all the experts' tokens against one weight), in bf16 on one GPU (session 42). dsplan prices
the experts as a batched GEMM (docs/model.md section 4.11, "GEMMs"); these times say whether
grouped kernels run at the batched rate and how both compare with the dense one, per shape.

Each case is an expert-parallel rank's view with balanced routing: E local experts of n
tokens each, hidden h, expert width f (gated: the first linear is 2f wide). For both linears
(fc1: h -> 2f, fc2: f -> h) the forward (n x out x in), the input gradient (n x in x out)
and the weight gradient (out x in x n, the tokens being the reduction) are timed.
Usage: grouped_gemm_rates.py OUT.json      Median of 20 after 5 warm-ups, CUDA events.
Exit status 3 without PyTorch or a GPU.
"""
import json
import sys

from cuda_timing import cuda_torch, time_each

CASES = {  # name: (E local experts, n tokens each, hidden, expert width)
    "qwen3-30b-a3b-ep16": (8, 4096, 2048, 768),
    "qwen3-30b-a3b-ep8": (16, 2048, 2048, 768),
    "qwen3-30b-a3b-ep1": (128, 256, 2048, 768),
    "gpt-oss-120b-ep8": (16, 1024, 2880, 2880),
    "deepseek-v3-ep64": (4, 8192, 7168, 2048),
    "mixtral-8x7b-ep1": (8, 1024, 4096, 14336),
}


def timed(fn):
    """Microseconds a launch: the median of 20 after 5 warm-ups."""
    return time_each(fn, repeats=20, warmup=5) * 1e6


def measure(torch, E, n, out_f, in_f):
    """(op, grouped_us, bmm_us, dense_us) for one linear in -> out of E experts."""
    dev, bf = "cuda", torch.bfloat16
    x = torch.randn(E * n, in_f, device=dev, dtype=bf)
    dy = torch.randn(E * n, out_f, device=dev, dtype=bf)
    w = torch.randn(E, out_f, in_f, device=dev, dtype=bf) * 0.02  # nn.Linear layout per expert
    w_dense = w[0]
    offs = torch.arange(1, E + 1, device=dev, dtype=torch.int32) * n
    x3, dy3 = x.view(E, n, in_f), dy.view(E, n, out_f)
    gm = getattr(torch, "_grouped_mm", None)
    ops = {
        "fwd": (lambda: gm(x, w.transpose(-2, -1), offs=offs),
                lambda: torch.bmm(x3, w.transpose(-2, -1)),
                lambda: x @ w_dense.t()),
        "dgrad": (lambda: gm(dy, w, offs=offs),
                  lambda: torch.bmm(dy3, w),
                  lambda: dy @ w_dense),
        "wgrad": (lambda: gm(dy.t(), x, offs=offs),
                  lambda: torch.bmm(dy3.transpose(1, 2), x3),
                  lambda: dy.t() @ x),
    }
    rows = []
    for op, (g, b, d) in ops.items():
        r = {"op": op}
        for name, fn in (("grouped_us", g), ("bmm_us", b), ("dense_us", d)):
            try:
                r[name] = timed(fn) if (gm is not None or name != "grouped_us") else None
            except Exception as e:  # noqa: BLE001 (recorded; the other forms still run)
                r[name] = None
                r[name.replace("_us", "_error")] = "%s: %s" % (type(e).__name__, str(e)[:200])
        rows.append(r)
    return rows


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: grouped_gemm_rates.py OUT.json")
    torch = cuda_torch("grouped_gemm_rates")
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": []}
    for case, (E, n, h, f) in CASES.items():
        for linear, out_f, in_f in (("fc1", 2 * f, h), ("fc2", h, f)):
            for r in measure(torch, E, n, out_f, in_f):
                r.update(case=case, linear=linear, experts=E, tokens=n, out=out_f, **{"in": in_f})
                result["rows"].append(r)
                print(json.dumps(r), flush=True)
            torch.cuda.empty_cache()
    with open(sys.argv[1], "w") as out:
        json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
