#!/usr/bin/env python3
"""One transformer layer with a mixture-of-experts MLP, forward and backward on one GPU, timed
and split by kernel class, beside the same layer with a dense MLP of the same FLOPs (its
width top-k x the expert width), to tell what an MoE layer costs beyond its GEMMs
(docs/accuracy.md, session 38's "next measurement"; session 42).

The layer is examples/gpt_model.py's Block with examples/moe_mlp.py, its weights in bf16 and
no autocast (as Megatron keeps a bf16 model), input [mbs, seq, hidden] bf16. Each case is the
view of one expert-parallel rank: experts/ep local experts and, with balanced routing, as
many tokens each as at that EP degree (ep x tokens x top-k / experts). Variants:
  grouped   torch._grouped_mm over the experts, balanced routing (what dsplan prices), the
            unfused permutation (atomic row additions) and the counts read by the host
  fused     the same with the permutation gathering in every direction (no atomics)
  nosync    fused, and the host never waits for the counts
  routed    grouped with the router's own (random-weight, uneven) choice
  loop      one GEMM per expert after reading the counts back (Megatron's SequentialMLP)
  dense     a dense MLP of width top-k x expert width (same GEMM FLOPs, no routing)
Usage: moe_layer_profile.py OUT.json [CASE...]   (default: every case)
Writes one JSON object: per case and variant the forward and forward+backward times (CUDA
events, median of 10 after 3 warm-ups), the host's time to issue a forward+backward, and
the kernel time by class from torch.profiler. Exit status 3 without PyTorch or a GPU.
"""
import json
import os
import sys
import time

from cuda_timing import cuda_torch, time_each

COMMON = ["--swiglu", "--normalization", "RMSNorm", "--position-embedding-type", "rope",
          "--disable-bias-linear", "--hidden-dropout", "0", "--attention-dropout", "0",
          "--use-flash-attn", "--group-query-attention", "--num-layers", "1",
          "--make-vocab-size-divisible-by", "1", "--vocab-size", "1024"]
CASES = {  # name: (flags, mbs); the rank's view at the EP degree in the name
    "qwen3-30b-a3b-ep8": (["--hidden-size", "2048", "--num-attention-heads", "32", "--num-query-groups", "4",
                           "--kv-channels", "128", "--qk-layernorm", "--num-experts", "16",
                           "--moe-router-topk", "8", "--moe-ffn-hidden-size", "768", "--seq-length", "4096"], 1),
    "qwen3-30b-a3b-ep1": (["--hidden-size", "2048", "--num-attention-heads", "32", "--num-query-groups", "4",
                           "--kv-channels", "128", "--qk-layernorm", "--num-experts", "128",
                           "--moe-router-topk", "8", "--moe-ffn-hidden-size", "768", "--seq-length", "4096"], 1),
    "gpt-oss-120b-ep8": (["--hidden-size", "2880", "--num-attention-heads", "64", "--num-query-groups", "8",
                          "--kv-channels", "64", "--num-experts", "16", "--moe-router-topk", "4",
                          "--moe-ffn-hidden-size", "2880", "--seq-length", "4096"], 1),
    # DeepSeek-V3's experts at EP 64 (4 a rank, 64 x 4096 x 8 / 256 = 8192 tokens each); its
    # attention (MLA) replaced by a plain one, which the dense twin subtracts.
    "deepseek-v3-experts-ep64": (["--hidden-size", "7168", "--num-attention-heads", "56", "--num-query-groups",
                                  "8", "--kv-channels", "128", "--num-experts", "4", "--moe-router-topk", "4",
                                  "--moe-ffn-hidden-size", "2048", "--seq-length", "8192"], 1),
    "mixtral-8x7b-ep1": (["--hidden-size", "4096", "--num-attention-heads", "32", "--num-query-groups", "8",
                          "--num-experts", "8", "--moe-router-topk", "2", "--moe-ffn-hidden-size", "14336",
                          "--seq-length", "4096"], 1),
}
BALANCED_GROUPED = ["--moe-grouped-gemm", "--moe-router-force-load-balancing"]
VARIANTS = {"grouped": BALANCED_GROUPED,
            "fused": BALANCED_GROUPED + ["--moe-permute-fusion"],
            "nosync": BALANCED_GROUPED + ["--moe-permute-fusion", "--moe-no-host-counts"],
            "routed": ["--moe-grouped-gemm"],
            "loop": ["--moe-router-force-load-balancing"],
            "dense": None}
CLASSES = [  # first match wins, on lower-cased kernel names
    ("attention", ("flash", "fmha", "sdpa", "cudnn", "attn")),
    ("grouped_gemm", ("grouped", "group_", "ptrarray", "ptr_array")),
    ("gemm", ("gemm", "nvjet", "xmma", "cutlass", "cublas", "sm90_", "sm80_")),
    ("topk_sort", ("topk", "sort", "radix", "bitonic", "scan", "cumsum", "histogram", "bincount")),
    ("index", ("index", "gather", "scatter")),
    ("norm", ("layer_norm", "layernorm", "rms_norm")),
    ("softmax", ("softmax",)),
    ("copy_cast", ("copy", "cast", "convert")),
    ("reduce", ("reduce",)),
    ("elementwise", ("elementwise", "vectorized", "unrolled", "silu", "fill")),
]


def kernel_class(name):
    n = name.lower().replace("nocast", "")  # gpu_kernel_impl_nocast: any elementwise kernel
    for cls, keys in CLASSES:
        if any(k in n for k in keys):
            return cls
    return "other"


def dense_twin(flags):
    """The case's flags with a dense MLP of width top-k x expert width instead of experts."""
    f = list(flags)
    i = f.index("--num-experts"); del f[i:i + 2]
    i = f.index("--moe-router-topk"); k = int(f[i + 1]); del f[i:i + 2]
    i = f.index("--moe-ffn-hidden-size"); width = int(f[i + 1]); del f[i:i + 2]
    return f + ["--ffn-hidden-size", str(k * width)]


def measure(torch, train_gpt, flags, mbs):
    from torch.profiler import ProfilerActivity, profile
    args = train_gpt.parse_args(flags)
    torch.manual_seed(args.seed)
    with torch.device("cuda"):
        block = train_gpt.build_model(args, torch).blocks[0]
    block = block.to(torch.bfloat16)
    x = torch.randn(mbs, args.seq_length, args.hidden_size, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    dy = torch.randn_like(x)

    def fwd():
        return block(x)

    def fwd_bwd():
        block(x).backward(dy)
        for p in block.parameters():
            p.grad = None
        x.grad = None

    def timed(fn):  # seconds: the median of 10 launches after 3 warm-ups
        return time_each(fn, repeats=10, warmup=3)

    with torch.no_grad():
        fwd_s = timed(fwd)
    step_s = timed(fwd_bwd)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        fwd_bwd()
    host_s = (time.perf_counter() - t0) / 5  # issue time, before the GPU catches up
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(2):
            fwd_bwd()
        torch.cuda.synchronize()
    by_class, calls, top = {}, 0, []
    for ev in prof.key_averages():
        t = getattr(ev, "device_time_total", None) or getattr(ev, "cuda_time_total", 0)
        if t <= 0:
            continue
        c = kernel_class(ev.key)
        by_class[c] = by_class.get(c, 0.0) + t / 2 / 1e6
        calls += ev.count / 2
        top.append((t / 2 / 1e6, ev.count / 2, ev.key[:140], c))
    top.sort(reverse=True)
    counts = None
    moe = getattr(block, "moe", None)
    if moe is not None:  # tokens per expert in the last forward (routing balance)
        with torch.no_grad():
            xr = x.reshape(-1, args.hidden_size)
            probs = torch.softmax(torch.nn.functional.linear(xr, moe.router).float(), -1)
            n = torch.bincount(torch.topk(probs, args.moe_router_topk, -1)[1].reshape(-1),
                               minlength=args.num_experts)
            counts = {"max": int(n.max()), "mean": float(n.float().mean()), "min": int(n.min())}
    del block
    torch.cuda.empty_cache()
    return {"fwd_s": fwd_s, "fwd_bwd_s": step_s, "host_issue_s": host_s,
            "kernel_s": sum(by_class.values()), "kernel_calls": calls,
            "by_class_s": dict(sorted(by_class.items(), key=lambda kv: -kv[1])),
            "router_counts_unbalanced": counts,
            "top_kernels": [{"s": t, "calls": n, "name": k, "class": c} for t, n, k, c in top[:25]]}


def fused_matches_unfused(torch):
    """The largest differences between the fused and unfused permutations' output and gradients
    (input, router, experts), in fp32 with the per-expert loop, on a small random layer.
    examples/ is on the import path (main)."""
    from moe_mlp import make_moe_mlp
    diffs = {}
    results = []
    for fused in (False, True):
        torch.manual_seed(0)
        with torch.device("cuda"):
            moe = make_moe_mlp(torch, 64, 96, 8, 2, True, grouped=False, permute_fusion=fused)
            x = torch.randn(2, 40, 64, requires_grad=True)
        y = moe(x)
        (y.square().sum() + moe.aux_loss).backward()
        results.append([y, x.grad, moe.router.grad, moe.w1.grad, moe.w2.grad])
    for name, a, b in zip(("y", "dx", "drouter", "dw1", "dw2"), *results):
        diffs[name] = float((a - b).abs().max())
    return diffs


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: moe_layer_profile.py OUT.json [CASE...]")
    torch = cuda_torch("moe_layer_profile")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    import train_gpt
    names = sys.argv[2:] or list(CASES)
    result_check = fused_matches_unfused(torch)
    print("fused vs unfused, largest differences:", json.dumps(result_check), flush=True)
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "has_grouped_mm": hasattr(torch, "_grouped_mm"), "fused_vs_unfused_max_diff": result_check,
              "cases": {}}
    for name in names:
        flags, mbs = CASES[name]
        flags = COMMON + flags
        result["cases"][name] = {"flags": flags, "mbs": mbs}
        for variant, extra in VARIANTS.items():
            f = dense_twin(flags) if extra is None else flags + extra
            try:
                r = measure(torch, train_gpt, f, mbs)
            except Exception as e:  # noqa: BLE001 (recorded, the other variants still run)
                r = {"error": "%s: %s" % (type(e).__name__, str(e)[:400])}
            result["cases"][name][variant] = r
            print(name, variant, json.dumps({k: v for k, v in r.items() if k != "top_kernels"}), flush=True)
            with open(sys.argv[1], "w") as out:  # kept after each, should a later one hang
                json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
