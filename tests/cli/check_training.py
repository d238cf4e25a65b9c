#!/usr/bin/env python3
"""estimate --train-tokens: every configuration's "training" object is the arithmetic of its
own predicted throughput, and the printed line says the same for #1.

Hand-derived: --global-batch 512 at gpt-2.7b's 2048 tokens is 1,048,576 tokens a step, so
300B tokens take ceil(3e11 / 1048576) = ceil(286102.29) = 286,103 steps. For each config:
days = tokens / tokens_per_s / 86400, GPU-hours = days x 24 x tp x pp x dp x cp, and
days_middle_80 = days x the evidence band's middle 80% (measured / predicted step)."""
import argparse
import json
import math
import re
import subprocess
import sys

ARGS = ["estimate", "--model", "gpt-2.7b", "--gpus", "16", "--global-batch", "512", "--train-tokens", "300B",
        "--top", "5"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def close(a, b, what):
    if not math.isclose(a, b, rel_tol=1e-9):
        fail(f"{what}: {a} != {b}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsplan", required=True)
    dsplan = ap.parse_args().dsplan
    plan = json.loads(subprocess.run([dsplan] + ARGS + ["--json"], capture_output=True, text=True,
                                     check=True).stdout)
    configs = [c for c in plan["configs"] if c["time"]["step_s"] > 0]
    if len(configs) < 2:
        fail("expected several timed configurations")
    for i, c in enumerate(configs):
        t = c.get("training")
        if t is None:
            fail(f"config {i} has no training object")
        gpus = c["tp"] * c["pp"] * c["dp"] * c.get("cp", 1)
        tokens_per_step = c["global_batch"] * c["seq_len"]
        if tokens_per_step != 512 * 2048:
            fail(f"config {i}: {tokens_per_step} tokens a step, not 1048576")
        if t["steps"] != 286103 or t["tokens"] != 3e11 or t["gpus"] != gpus:
            fail(f"config {i}: {t}")
        days = 3e11 / c["throughput"]["tokens_per_s"] / 86400
        close(t["days"], days, f"config {i} days")
        close(t["gpu_hours"], days * 24 * gpus, f"config {i} GPU-hours")
        band = c["evidence"].get("middle_80")
        if band:
            close(t["days_middle_80"][0], days * band[0], f"config {i} low days")
            close(t["days_middle_80"][1], days * band[1], f"config {i} high days")
        elif "days_middle_80" in t:
            fail(f"config {i}: a range without an evidence band")
    text = subprocess.run([dsplan] + ARGS, capture_output=True, text=True, check=True).stdout
    m = re.search(r"^training 300B tokens with #1: 286,103 steps, ([0-9.]+) days on 16 GPUs \(([0-9,]+) GPU-hours\)",
                  text, re.M)
    if not m:
        fail("no training line for #1:\n" + text)
    best = configs[0]["training"]
    close(round(best["days"], 1), float(m.group(1)), "printed days")
    if int(m.group(2).replace(",", "")) != round(best["gpu_hours"]):
        fail(f"printed GPU-hours {m.group(2)} vs {best['gpu_hours']}")
    print(f"ok: {len(configs)} configurations, #1 {best['days']:.2f} days")


if __name__ == "__main__":
    main()
