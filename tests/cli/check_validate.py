#!/usr/bin/env python3
"""Runs `dsplan validate FILE --json` and checks its summary against bounds.

Used for held-out measurement files (validation/holdout/) and dsplan's own real runs
(validation/real/): every row must map to a
prediction, and the aggregate errors must stay within the bounds the test names, so a
model change that makes dsplan worse on data it was not developed against fails here.
"""
import argparse
import json
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsplan", required=True)
    ap.add_argument("--file", required=True, action="append",
                    help="measurements file; give it again to validate several as one set")
    ap.add_argument("--rows", type=int, required=True, help="time rows the file must yield")
    ap.add_argument("--skipped", type=int, default=0,
                    help="rows the file keeps that dsplan does not model (each skipped with a reason)")
    ap.add_argument("--max-mape", type=float, required=True, help="bound on the time MAPE (fraction)")
    ap.add_argument("--max-over-40", type=int, default=0, help="rows allowed beyond 40%% error")
    ap.add_argument("--max-not-fit", type=int, default=None,
                    help="rows that ran but are predicted not to fit, at most (if given)")
    ap.add_argument("--max-failed-checks", type=int, default=None,
                    help="memory checks (OOM, largest micro-batch) allowed to fail, at most (if given)")
    ap.add_argument("--max-memory-p90", type=float, default=None,
                    help="bound on the p90 |error| of the memory rows (fraction), if given")
    ap.add_argument("--profile", default=None, help="calibration profile to validate with")
    ap.add_argument("--profile-cases", type=int, default=None, help="cases the profile must cover")
    a = ap.parse_args()
    cmd = [a.dsplan, "validate", *a.file, "--json"] + (["--profile", a.profile] if a.profile else [])
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        print(f"FAIL dsplan validate exited {run.returncode}: {run.stderr.strip()}")
        return 1
    s = json.loads(run.stdout)
    summ, fails = s["summary"], []
    if len(s["skipped"]) != a.skipped:
        fails.append(f"rows skipped: expected {a.skipped}, got {len(s['skipped'])}: {s['skipped']}")
    if summ["unpredicted_rows"]:
        fails.append(f"{summ['unpredicted_rows']} rows without a valid configuration")
    if summ["time_rows"] != a.rows:
        fails.append(f"time rows: expected {a.rows}, got {summ['time_rows']}")
    if summ["time_mape"] > a.max_mape:
        fails.append(f"time MAPE {summ['time_mape']:.3f} > {a.max_mape}")
    # A row counts once, though its time and largest-micro-batch lines both say so.
    not_fit = list(dict.fromkeys(r["id"] for r in s["rows"] if "not to fit" in (r.get("note") or "")))
    if a.max_not_fit is not None and len(not_fit) > a.max_not_fit:
        fails.append(f"{len(not_fit)} rows that ran predicted not to fit (allowed {a.max_not_fit}): "
                     + ", ".join(not_fit))
    failed_checks = summ["checks"] - summ["checks_passed"]
    if a.max_failed_checks is not None and failed_checks > a.max_failed_checks:
        fails.append(f"{failed_checks} memory checks failed (allowed {a.max_failed_checks})")
    if a.max_memory_p90 is not None and summ["memory_p90_abs_error"] > a.max_memory_p90:
        fails.append(f"memory p90 |error| {summ['memory_p90_abs_error']:.3f} > {a.max_memory_p90}")
    covered = s.get("profile", {}).get("cases")
    if a.profile_cases is not None and covered != a.profile_cases:
        fails.append(f"profile applied to {covered} cases, expected {a.profile_cases}")
    if summ["time_rows_over_40pct"] > a.max_over_40:
        fails.append(f"{summ['time_rows_over_40pct']} rows worse than 40% (allowed {a.max_over_40})")
    for f in fails:
        print("FAIL " + f)
    print(f"time MAPE {summ['time_mape']:.3f} over {summ['time_rows']} rows, "
          f"{summ['time_rows_over_40pct']} worse than 40%")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
