#!/usr/bin/env python3
# Does a training step slow down when it runs close to the GPU's memory limit? The
# hypothesis behind the DeepSpeed autotuner's GPT2-large z0 row (docs/accuracy.md, "Rows
# that are off"): near the limit PyTorch's caching allocator frees its cache and retries
# cudaMalloc (memory_stats' num_alloc_retries), which synchronises. This script trains
# Hugging Face GPT-2 (a configuration by name) with fp16 autocast, GradScaler and AdamW,
# first without a cap to find the peak, then with torch.cuda.set_per_process_memory_fraction
# capping the allocator at a few factors of the peak allocated bytes, and prints the step
# time, alloc retries and out-of-memory count at each cap as JSON lines.
# Usage: alloc_pressure.py [--model gpt2-large] [--mbs 2] [--seq 1024] [--steps 6]
import argparse
import json
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2-large")
    ap.add_argument("--mbs", type=int, default=2)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--caps", default="1.30,1.10,1.05,1.03,1.02,1.01")
    a = ap.parse_args()
    from transformers import GPT2Config, GPT2LMHeadModel
    dims = {"gpt2": (12, 768, 12), "gpt2-medium": (24, 1024, 16), "gpt2-large": (36, 1280, 20),
            "gpt2-xl": (48, 1600, 25)}[a.model]
    cfg = GPT2Config(n_layer=dims[0], n_embd=dims[1], n_head=dims[2], n_positions=a.seq)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    scaler = torch.amp.GradScaler("cuda")
    ids = torch.randint(0, cfg.vocab_size, (a.mbs, a.seq), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(input_ids=ids, labels=ids).loss
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    def timed(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / n * 1e3

    total = torch.cuda.get_device_properties(0).total_memory
    for _ in range(2):
        step()
    torch.cuda.reset_peak_memory_stats()
    base = timed(a.steps)
    peak_alloc = torch.cuda.max_memory_allocated()
    peak_res = torch.cuda.max_memory_reserved()
    print(json.dumps({"cap": None, "step_ms": base, "peak_allocated_GiB": peak_alloc / 2**30,
                      "peak_reserved_GiB": peak_res / 2**30}), flush=True)
    for f in (float(x) for x in a.caps.split(",")):
        torch.cuda.empty_cache()
        torch.cuda.set_per_process_memory_fraction(min(1.0, f * peak_alloc / total))
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_stats()
        try:
            ms = timed(a.steps)
            oom = False
        except torch.OutOfMemoryError:
            ms, oom = None, True
            opt.zero_grad(set_to_none=True)
        after = torch.cuda.memory_stats()
        retries = after.get("num_alloc_retries", 0) - before.get("num_alloc_retries", 0)
        print(json.dumps({"cap": f, "step_ms": ms, "oom": oom, "alloc_retries": retries,
                          "peak_reserved_GiB": torch.cuda.max_memory_reserved() / 2**30}), flush=True)
        if oom:
            break


if __name__ == "__main__":
    main()
