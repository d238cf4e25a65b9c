#!/usr/bin/env python3
"""dsplan compare: each row is exactly what `estimate` ranks first for that hardware and GPU
count with the same flags, its scaling is tokens/s per GPU over the smallest count's on the
same hardware (1.00 for that count), and a combination where nothing fits is a row with its
reason while the others still get their best configuration."""
import argparse
import json
import math
import subprocess
import sys

SHARED = ["--model", "gpt-2.7b", "--global-batch", "256", "--train-tokens", "100B"]
KEYS = ["zero_stage", "tp", "pp", "dp", "vpp", "micro_batch", "grad_accum", "checkpointing", "offload"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(dsplan, args):
    p = subprocess.run([dsplan] + args, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{args}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsplan", required=True)
    dsplan = ap.parse_args().dsplan
    rows = json.loads(run(dsplan, ["compare", "--gpus", "16,8", "--hw", "dgx-a100,dgx-h100", "--json"] + SHARED))["rows"]
    # --gpus 16,8: rows run from the smallest count up within each --hw, in --hw order.
    if [(r["hardware"], r["num_gpus"]) for r in rows] != [("dgx-a100", 8), ("dgx-a100", 16), ("dgx-h100", 8),
                                                          ("dgx-h100", 16)]:
        fail("rows not in --hw order, smallest GPU count first: " + str([(r["hardware"], r["num_gpus"]) for r in rows]))
    base = {}
    for r in rows:
        est = json.loads(run(dsplan, ["estimate", "--hw", r["hardware"], "--gpus", str(r["num_gpus"]), "--json",
                                      "--top", "1"] + SHARED))["configs"][0]
        best = r["best"]
        for k in KEYS:
            if best.get(k) != est.get(k):
                fail(f"{r['hardware']} x {r['num_gpus']}: {k} {best.get(k)} != estimate's {est.get(k)}")
        if not math.isclose(best["time"]["step_s"], est["time"]["step_s"], rel_tol=1e-12):
            fail(f"{r['hardware']} x {r['num_gpus']}: step differs from estimate's")
        if best["training"] != est["training"] or best["evidence"] != est["evidence"]:
            fail(f"{r['hardware']} x {r['num_gpus']}: training or evidence differs from estimate's")
        tpg = est["throughput"]["tokens_per_s"] / r["num_gpus"]
        if not math.isclose(r["tokens_per_s_per_gpu"], tpg, rel_tol=1e-12):
            fail("tokens_per_s_per_gpu")
        base.setdefault(r["hardware"], tpg)
        if not math.isclose(r["scaling_efficiency"], tpg / base[r["hardware"]], rel_tol=1e-12):
            fail(f"{r['hardware']} x {r['num_gpus']}: scaling {r['scaling_efficiency']}")
    if rows[0]["scaling_efficiency"] != 1.0 or rows[2]["scaling_efficiency"] != 1.0:
        fail("the smallest count's scaling is not 1")
    # ZeRO-0 GPT 13B: 16 bytes a parameter (208 GB) cannot fit one 80 GB A100, but TP over 8 can.
    mixed = json.loads(run(dsplan, ["compare", "--model", "gpt-13b", "--gpus", "1,8", "--zero", "0", "--json"]))["rows"]
    if "reason" not in mixed[0] or not mixed[0]["reason"].startswith("nothing fits") or "best" not in mixed[1]:
        fail("mixed rows: " + json.dumps(mixed)[:400])
    text = run(dsplan, ["compare", "--model", "gpt-13b", "--gpus", "1,8", "--zero", "0"])
    if "dgx-a100             1  nothing fits (" not in text:
        fail("no nothing-fits row in the table:\n" + text)
    print("ok")


if __name__ == "__main__":
    main()
