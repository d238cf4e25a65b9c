#!/usr/bin/env python3
"""Output that cannot be written is a failure: with standard output on /dev/full (every
write fails with ENOSPC) each command below must exit 1 and say so on stderr, help and
version text included; a command that already failed keeps its own status (2)."""
import subprocess
import sys

dsplan = sys.argv[1]
cases = [(["models"], 1), (["--help"], 1), (["--version"], 1), (["estimate", "--help"], 1),
         (["estimate", "--model", "gpt2", "--gpus", "1", "--top", "1"], 1),
         (["estimate", "--model", "no-such-model", "--gpus", "1"], 2),
         (["compare", "--model", "gpt2", "--gpus", "1,2"], 1)]
fails = []
with open("/dev/full", "w") as full:
    for args, want in cases:
        run = subprocess.run([dsplan] + args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
        if run.returncode != want:
            fails.append(f"{args}: exit {run.returncode}, want {want}")
        if want == 1 and "could not write the output" not in run.stderr:
            fails.append(f"{args}: stderr does not say the output was lost: {run.stderr.strip()!r}")
for f in fails:
    print("FAIL " + f)
sys.exit(1 if fails else 0)
