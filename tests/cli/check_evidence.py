#!/usr/bin/env python3
"""Checks that the accuracy bands `dsplan estimate` quotes (estimator/search/evidence.cc: the
step's and the peak memory's) are what the model predicts for their rows: `dsplan validate
--evidence --json` over the development, held-out, evidence and real-run files must report
every regime as agreeing.
On a mismatch it prints the observed values as the table's lines, to review and paste.

  check_evidence.py --dsplan BIN FILE [FILE ...]
"""
import argparse
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsplan", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    run = subprocess.run([a.dsplan, "validate", "--evidence", "--json", *a.files], capture_output=True, text=True,
                         timeout=600)
    if run.returncode != 0:
        print(run.stdout, run.stderr)
        return 1
    doc = json.loads(run.stdout)
    regimes = [("step", r) for r in doc["regimes"]] + [("memory", r) for r in doc["memory_regimes"]]
    bad = [(k, r) for k, r in regimes if not r["agrees"]]
    steps = sum(1 for r in doc["rows"] if r["kind"] != "memory_MiB")
    print(f"{doc['agreeing']} of {len(regimes)} regimes agree over {steps} step and {len(doc['rows']) - steps} "
          "memory evidence rows")
    if steps < 300:  # the files above hold 319 such rows (session 36)
        print("too few step evidence rows: a file or a mapping went missing")
        return 1
    for kind, r in bad:
        o, b = r.get("observed"), r.get("band")
        def fields(x):
            return [x["runs"], round(x["median_abs_error"], 4),
                    *[round(v, 4) for v in x["measured_over_predicted"] + x["middle_80"]]]
        print(f"{kind} regime {r['regime']!r}: band {b and fields(b)}, observed {o and fields(o)}")
        if o:
            lo, hi = o["measured_over_predicted"]
            p10, p90 = o["middle_80"]
            table = "kMemoryBands" if kind == "memory" else "kBands"
            print(f'    {table}: {{"{r["regime"]}", {o["runs"]}, {o["median_abs_error"]:.3f}, {lo:.2f}, {hi:.2f}, '
                  f'{p10:.2f}, {p90:.2f}, "..."}},')
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
