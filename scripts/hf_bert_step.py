#!/usr/bin/env python3
# Times Hugging Face BERT pre-training steps on one GPU: the workload of the PAI BERT-base
# rows of ../shared/validation (seed 004: BertForPreTraining, micro-batch 16, sequence 512,
# fp32 or fp16 mixed precision). It exists to test dsplan's operator model of an
# autocast encoder with standard attention against real kernels (docs/accuracy.md).
# Assumes transformers' BertForPreTraining with its default (bert-base) configuration,
# torch.amp autocast + GradScaler for fp16, torch.optim.AdamW with its default
# implementation, random token ids, 15% of positions carrying an MLM label and a random NSP
# label, and no DDP wrapper (one rank). The time is the mean over timed steps after warm-up
# of forward, backward and optimizer step (CUDA events); memory is max_memory_allocated.
# Usage: hf_bert_step.py OUT.json [--precision fp32|fp16|bf16] [--attn eager|sdpa]
#                        [--mbs 16] [--seq 512] [--steps 10] [--profile]
import argparse
import json
import sys

import torch


def build(attn):
    from transformers import BertConfig, BertForPreTraining
    cfg = BertConfig()
    try:
        model = BertForPreTraining._from_config(cfg, attn_implementation=attn)
    except (TypeError, ValueError):
        cfg._attn_implementation = attn
        model = BertForPreTraining(cfg)
    return model, getattr(model.config, "_attn_implementation", "unknown")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--precision", default="fp16", choices=["fp32", "fp16", "bf16"])
    ap.add_argument("--attn", default="eager", choices=["eager", "sdpa"])
    ap.add_argument("--mbs", type=int, default=16)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model, impl = build(a.attn)
    model = model.to(dev).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    dtype = {"fp32": None, "fp16": torch.float16, "bf16": torch.bfloat16}[a.precision]
    scaler = torch.amp.GradScaler("cuda", enabled=a.precision == "fp16")
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (a.mbs, a.seq), device=dev)
    labels = torch.full_like(ids, -100)
    mask = torch.rand(ids.shape, device=dev) < 0.15
    labels[mask] = ids[mask]
    nsp = torch.randint(0, 2, (a.mbs,), device=dev)
    tt = torch.zeros_like(ids)
    am = torch.ones_like(ids)

    def step():
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
            out = model(input_ids=ids, token_type_ids=tt, attention_mask=am, labels=labels,
                        next_sentence_label=nsp)
        scaler.scale(out.loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0.record()
    for _ in range(a.steps):
        step()
    t1.record()
    torch.cuda.synchronize()
    ms = t0.elapsed_time(t1) / a.steps
    res = {"precision": a.precision, "attn_implementation": impl, "micro_batch": a.mbs,
           "seq": a.seq, "iteration_time_ms": ms, "samples_per_s": a.mbs * 1000.0 / ms,
           "peak_memory_MiB": torch.cuda.max_memory_allocated() / 2**20,
           "params": sum(p.numel() for p in model.parameters()),
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}
    if a.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(2):
                step()
            torch.cuda.synchronize()
        kernels = {}
        for ev in prof.key_averages():
            t = getattr(ev, "device_time_total", None) or getattr(ev, "cuda_time_total", 0)
            if t > 0 and ev.count > 0:
                kernels[ev.key] = {"us_per_step": t / 2.0, "calls_per_step": ev.count / 2.0}
        top = sorted(kernels.items(), key=lambda kv: -kv[1]["us_per_step"])
        res["kernel_us_per_step_total"] = sum(v["us_per_step"] for _, v in top)
        res["kernel_calls_per_step"] = sum(v["calls_per_step"] for _, v in top)
        res["kernels"] = dict(top[:60])
    json.dump(res, open(a.out, "w"), indent=1)
    print(json.dumps({k: v for k, v in res.items() if k != "kernels"}))


if __name__ == "__main__":
    sys.exit(main())
