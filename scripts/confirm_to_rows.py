#!/usr/bin/env python3
"""Turns `dsplan confirm` results into validation rows (the published rows' format), so that
`dsplan validate FILE` compares the model with real runs the way it compares it with papers.

Each experiment folder under the given results folders holds exp.json (the plan and the
reference workload's argv) and metrics.json (the autotuner metric: latency in microseconds,
the mean of the profiled optimizer steps, and torch.cuda.max_memory_allocated in GiB).
Only experiments whose outcome is "ok" become rows. The rows' model block is read off the
workload's argv; the GPU is named on the command line, as validate maps it (validation_map.cc).
Prints the JSON array on standard output.

Usage: confirm_to_rows.py --prefix h200_real --gpu "H200 SXM 141GB" --gpu-mem-gb 141
         --source TEXT --note TEXT [--held-out] RESULTS_DIR [RESULTS_DIR ...]
"""
import argparse
import json
import os
import sys


def flag(argv, name, default=None):
    return argv[argv.index(name) + 1] if name in argv else default


def model_block(name, argv):
    layers, hidden = int(flag(argv, "--num-layers")), int(flag(argv, "--hidden-size"))
    heads, seq = int(flag(argv, "--num-attention-heads")), int(flag(argv, "--seq-length"))
    vocab = int(flag(argv, "--vocab-size", 0)) or None
    block = {"name": name, "layers": layers, "hidden": hidden, "heads": heads, "seq_len": seq}
    if vocab:
        block["vocab"] = vocab
    return block


def describe_recompute(cfg, argv):
    ck = cfg["checkpointing"]
    if ck.startswith("block"):
        n = flag(argv, "--recompute-num-layers", "?")
        return ("selective block-level AC: the first %s of %s layers (Megatron --recompute-method block)"
                % (n, flag(argv, "--num-layers")))
    return ck


def row_for(exp_dir, pass_name, a):
    with open(os.path.join(exp_dir, "exp.json")) as f:
        exp = json.load(f)
    if exp.get("result", {}).get("outcome") != "ok":
        return None
    with open(os.path.join(exp_dir, "metrics.json")) as f:
        metrics = json.load(f)
    cfg, argv = exp["dsplan"]["config"], exp["dsplan"]["argv"]
    model = pass_name.split("-noflash")[0].split("-fp16")[0]  # the pass's model preset
    ddp = cfg["framework"] == "ddp"
    prec = cfg["precision"]
    other = ("PyTorch DDP path of dsplan's reference workload (examples/train_gpt.py --no-deepspeed): "
             "torch.amp %s%s, torch.optim.AdamW (foreach), no DDP wrapper on one rank, no DeepSpeed"
             % (prec, " with GradScaler" if prec == "fp16" else "")) if ddp else \
        "DeepSpeed ZeRO-%d %s through dsplan's reference workload (examples/train_gpt.py)" % (cfg["zero_stage"], prec)
    split = [f for f in ("--separate-qkv", "--separate-gate-up", "--eager-rmsnorm") if f in argv]
    if split:  # validate reads these flags (separate linears, RMSNorm kernels; validation_rows.cc)
        other += ", with " + " ".join(split)
    measured = {"iteration_time_ms": round(metrics["latency"] / 1e3, 3),
                "peak_memory_MB": round(metrics["peak_memory_GiB"] * 1024, 1)}
    if metrics.get("peak_reserved_GiB", 0) > 0:  # the workload since session 34
        measured["peak_reserved_MiB"] = round(metrics["peak_reserved_GiB"] * 1024, 1)
    tag = "%s_%s_z%d_mbs%d" % (model,
                               "ddp" if ddp else "ds", cfg["zero_stage"], cfg["micro_batch"])
    if cfg["checkpointing"] != "none":
        tag += "_ck" + cfg["checkpointing"].split("-")[0]
    if not cfg["flash_attention"]:
        tag += "_noflash"
    if prec == "fp16":
        tag += "_fp16"
    return {
        "id": "%s_%s" % (a.prefix, tag),
        "source": a.source,
        "model": model_block(model, argv),
        "hardware": {"gpu": a.gpu, "gpu_mem_gb": a.gpu_mem_gb, "num_gpus": 1, "nodes": 1,
                     "interconnect": "n/a (one GPU)"},
        "parallel": {"tp": cfg["tp"], "pp": cfg["pp"], "dp": cfg["dp"], "zero_stage": cfg["zero_stage"],
                     "offload": cfg["offload"] != "none", "micro_batch": cfg["micro_batch"],
                     "global_batch": cfg["global_batch"], "grad_accum": cfg["grad_accum"],
                     "recompute": describe_recompute(cfg, argv), "sequence_parallel": cfg["sequence_parallel"],
                     "flash_attention": cfg["flash_attention"], "precision": prec, "other": other},
        "measured": measured,
        "notes": ("%s run. iteration_time_ms: the autotuner metric's latency (mean of optimizer steps 3-5); "
                  "peak_memory_MB: torch.cuda.max_memory_allocated in MiB%s. %s"
                  % ("held out" if a.held_out else "development",
                     "; peak_reserved_MiB: torch.cuda.max_memory_reserved" if "peak_reserved_MiB" in measured else "",
                     a.note)),
        "inferred": [],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--prefix", required=True)
    p.add_argument("--gpu", required=True)
    p.add_argument("--gpu-mem-gb", type=float, required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--note", default="")
    p.add_argument("--held-out", action="store_true")
    p.add_argument("dirs", nargs="+")
    a = p.parse_args()
    rows = []
    for d in a.dirs:
        pass_name = os.path.basename(os.path.normpath(d)).removeprefix("confirm-")
        for exp in sorted(os.listdir(d)):
            if os.path.isfile(os.path.join(d, exp, "exp.json")):
                row = row_for(os.path.join(d, exp), pass_name, a)
                if row:
                    rows.append(row)
    if not rows:
        print("confirm_to_rows: no successful experiment under %s" % " ".join(a.dirs), file=sys.stderr)
        return 1
    json.dump(rows, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
