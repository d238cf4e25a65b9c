#!/usr/bin/env python3
"""Kernel-time breakdown of one training step of dsplan's reference workload
(examples/train_gpt.py, plain PyTorch path: AMP autocast, AdamW, one GPU), to compare with
dsplan's own breakdown of the same configuration (`dsplan estimate --explain`).

Usage: torch_step_profile.py OUT.json -- [train_gpt.py shape flags] [--mbs N] [--dtype bf16]
                              [--ds-config DS_CONFIG.json]
Profiles steps 4-5 (after three warm-up steps) with torch.profiler and writes one JSON
object: wall step time, GPU kernel time by category (gemm, attention, optimizer, norm,
softmax_loss, elementwise, copy_cast, reduce, other) and the 40 longest kernels. With
--ds-config the step is DeepSpeed's engine (forward, backward, step), and the wall time of
each of the three phases is recorded too (synchronised), to tell GPU work from host time.
Exit status 3 without PyTorch or a CUDA device.
"""
import json
import os
import sys
import time

CATEGORIES = [  # first match wins; names are CUDA kernel names, lower-cased
    ("attention", ("flash", "fmha", "sdpa", "cudnn", "attn")),
    ("gemm", ("gemm", "nvjet", "xmma", "cutlass", "cublas", "sm90_", "sm80_")),
    ("optimizer", ("multi_tensor", "adam", "fused_adam")),
    ("norm", ("layer_norm", "layernorm", "rms_norm")),
    ("softmax_loss", ("softmax", "nll_loss", "cross_entropy", "log_softmax")),
    ("copy_cast", ("copy", "cast", "convert")),
    ("reduce", ("reduce",)),
    ("elementwise", ("elementwise", "vectorized", "unrolled", "gelu", "silu", "dropout", "fill")),
]


def category(name):
    n = name.lower()
    for cat, keys in CATEGORIES:
        if any(k in n for k in keys):
            return cat
    return "other"


def main():
    if "--" not in sys.argv or len(sys.argv) < 3:
        sys.exit("usage: torch_step_profile.py OUT.json -- [train_gpt.py flags] [--mbs N]")
    out_path = sys.argv[1]
    rest = sys.argv[sys.argv.index("--") + 1:]
    mbs, dtype_name = 8, "bf16"
    if "--mbs" in rest:
        i = rest.index("--mbs"); mbs = int(rest[i + 1]); del rest[i:i + 2]
    if "--dtype" in rest:
        i = rest.index("--dtype"); dtype_name = rest[i + 1]; del rest[i:i + 2]
    ds_config = None
    if "--ds-config" in rest:
        i = rest.index("--ds-config"); ds_config = rest[i + 1]; del rest[i:i + 2]
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError as e:
        print("torch_step_profile: PyTorch is not available: %s" % e, file=sys.stderr)
        sys.exit(3)
    if not torch.cuda.is_available():
        print("torch_step_profile: no CUDA device", file=sys.stderr)
        sys.exit(3)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    import train_gpt
    args = train_gpt.parse_args(rest)
    torch.manual_seed(args.seed)
    model = train_gpt.build_model(args, torch).cuda()
    n_params = sum(p.numel() for p in model.parameters())
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    phases = {"fwd": [], "bwd": [], "step": []}

    def timed(name, fn):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = fn()
        torch.cuda.synchronize()
        phases[name].append(time.perf_counter() - t0)
        return out

    if ds_config:
        import deepspeed
        train_gpt.init_distributed(torch)
        deepspeed.init_distributed()
        with open(ds_config) as f:
            ds = json.load(f)
        ds.pop("autotuning", None)
        ds["train_micro_batch_size_per_gpu"], ds["gradient_accumulation_steps"] = mbs, 1
        ds["train_batch_size"] = mbs
        engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds)

        def step():
            tokens = torch.randint(args.vocab_size, (mbs, args.seq_length + 1), device="cuda", generator=gen)
            loss = timed("fwd", lambda: engine(tokens))
            timed("bwd", lambda: engine.backward(loss))
            timed("step", engine.step)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def step():
            tokens = torch.randint(args.vocab_size, (mbs, args.seq_length + 1), device="cuda", generator=gen)
            with torch.autocast("cuda", dtype=dtype):
                loss = timed("fwd", lambda: model(tokens))
            timed("bwd", loss.backward)
            timed("step", opt.step)
            opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    walls = []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(2):
            t0 = time.perf_counter()
            step()
            torch.cuda.synchronize()
            walls.append(time.perf_counter() - t0)
    kernels = {}
    for ev in prof.key_averages():
        t = getattr(ev, "device_time_total", None)
        if t is None:
            t = getattr(ev, "cuda_time_total", 0)
        if t <= 0 or ev.key.startswith("ProfilerStep"):
            continue
        kernels[ev.key] = (kernels.get(ev.key, (0, 0))[0] + t / 2 / 1e6, ev.count / 2)
    by_cat, calls_by_cat = {}, {}
    for name, (t, n) in kernels.items():
        c = category(name)
        by_cat[c] = by_cat.get(c, 0.0) + t
        calls_by_cat[c] = calls_by_cat.get(c, 0.0) + n
    top = sorted(kernels.items(), key=lambda kv: -kv[1][0])[:40]
    result = {
        "args": rest, "mbs": mbs, "dtype": dtype_name, "params": n_params,
        "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "wall_step_s": min(walls), "kernel_s": sum(t for t, _ in kernels.values()),
        "phase_wall_s": {k: min(v[-2:]) for k, v in phases.items() if v},
        "deepspeed": bool(ds_config),
        "by_category_s": dict(sorted(by_cat.items(), key=lambda kv: -kv[1])),
        "kernel_calls_per_step": sum(n for _, n in kernels.values()),
        "calls_by_category": dict(sorted(calls_by_cat.items(), key=lambda kv: -kv[1])),
        "peak_memory_GiB": torch.cuda.max_memory_allocated() / 2**30,
        "peak_reserved_GiB": torch.cuda.max_memory_reserved() / 2**30,
        "top_kernels": [{"name": k[:160], "s": v[0], "calls": v[1], "category": category(k)}
                        for k, v in top],
    }
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps({k: result[k] for k in ("wall_step_s", "kernel_s", "by_category_s",
                                             "kernel_calls_per_step", "calls_by_category")}))


if __name__ == "__main__":
    main()
