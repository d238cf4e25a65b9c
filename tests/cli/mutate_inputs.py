#!/usr/bin/env python3
"""Mutation test of dsplan's input files: every key of a valid model JSON, cluster JSON,
Hugging Face config.json, validation file, calibration profile, raw calibration records,
residual model (learned first by `confirm` from the fake workload) and `confirm --plan`
plan (its top-level keys and nulled model keys) is deleted, nulled,
given the wrong type or an extreme number, and each file is also truncated, padded with
garbage and given a duplicated key. dsplan must answer every mutant with exit 0 (a mutant
that is still valid; then no NaN or inf in what it prints) or exit 2 with one or more
"dsplan: error:" lines, an empty stdout, no crash text and no output file, within the time
limit (`confirm` may also exit 1: no configuration ran). Deterministic (no randomness);
standard library only.

  tests/cli/mutate_inputs.py --dsplan BIN [--source DIR]

Session 13's fuzzing pass ran ~14,000 such cases once; this keeps about a thousand of them
as a regression test (label cli, ctest cli.mutate_inputs). Session 15 added the profile,
records, residual-model and plan files (about 2,250 runs in all).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CRASH_TEXT = ["terminate called", "Segmentation fault", "Aborted", "what():", "Traceback",
              "Stack trace", "core dumped", "json.exception", "std::"]
VALUES = [None, "x", -1, 0, 1e-300, 1e300, -1e300, 1.5, True, [], {}, [1, 2], 2 ** 31, "1e400"]


def mutants(doc):
    """(label, text) pairs: per top-level key, deletion and each replacement value."""
    if isinstance(doc, dict):
        for key in list(doc):
            d = dict(doc)
            del d[key]
            yield "del %s" % key, json.dumps(d)
            for v in VALUES:
                d = dict(doc)
                d[key] = v
                yield "%s=%r" % (key, v), json.dumps(d)
        # One level down (a row's model/parallel/hardware/measured, a cluster's gpu), with
        # the values most likely to slip through.
        for key, sub in doc.items():
            if not isinstance(sub, dict):
                continue
            for subkey in list(sub):
                for v in ["__delete__", None, "x", -1, 0, 1e300, []]:
                    d = json.loads(json.dumps(doc))
                    if v == "__delete__":
                        del d[key][subkey]
                    else:
                        d[key][subkey] = v
                    yield "%s.%s=%r" % (key, subkey, v), json.dumps(d)
    text = json.dumps(doc, indent=1)
    for frac in (0.1, 0.5, 0.9):
        yield "truncated at %d%%" % (frac * 100), text[: int(len(text) * frac)]
    yield "trailing garbage", text + " }]x"
    yield "empty file", ""
    yield "not an object", "[1, 2, 3]"
    if isinstance(doc, dict) and doc:
        first = next(iter(doc))
        yield "duplicate key", text.rstrip()[:-1] + ', %s: %s}' % (json.dumps(first), json.dumps(doc[first]))


def check(dsplan, args, cwd, label, codes=None, allowed=(0, 2)):
    try:
        p = subprocess.run([dsplan] + args, cwd=cwd, capture_output=True, text=True, timeout=30,
                           errors="replace")
    except subprocess.TimeoutExpired:
        return ["%s: %s: no answer within 30 s" % (label, " ".join(args))]
    problems = []
    if codes is not None:
        codes.append(p.returncode)
    text = p.stdout + p.stderr
    bad = [c for c in CRASH_TEXT if c in text]
    if p.returncode not in allowed or bad:
        problems.append("%s: exit %d%s" % (label, p.returncode, (", crash text %r" % bad) if bad else ""))
    if p.returncode == 0 and re.search(r"(?<![A-Za-z])-?(nan|inf)s?(?![A-Za-z])", p.stdout, re.I):
        problems.append("%s: exit 0 with a non-finite number in the output" % label)
    if p.returncode == 2:
        if p.stdout.strip():
            problems.append("%s: exit 2 with stdout %r" % (label, p.stdout[:120]))
        if not p.stderr.startswith("dsplan: error:"):
            problems.append("%s: exit 2 without a 'dsplan: error:' line: %r" % (label, p.stderr[:200]))
    if problems:
        problems[-1] += "\n    stderr: " + p.stderr[:300].replace("\n", "\n    ")
    return problems


def plan_mutant_kept(label):
    """The plan mutants worth a confirm run each: top-level keys, whole-file damage, and the
    model keys set to null (nested keys other than the model's are skipped)."""
    key = label.split("=")[0]
    if key.startswith("model."):
        return label.endswith("=None")
    return "." not in key


def learn_residual_model(dsplan, source, data):
    """A residual model as `confirm` writes it: two fake-workload runs of the tiny plan."""
    with tempfile.TemporaryDirectory(prefix="dsplan-residual-") as tmp:
        cmd = [dsplan, "confirm", "--plan", os.path.join(data, "confirm", "plan_tiny.json"), "--top", "2",
               "--", sys.executable, os.path.join(source, "tests", "workloads", "fake_train.py"),
               "--deepspeed_config", "ds.json"]
        p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=120)
        path = os.path.join(tmp, "autotuning_results", "residual_model.json")
        if p.returncode != 0 or not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsplan", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--source", default=os.path.dirname(os.path.dirname(here)), help="the source tree")
    a = ap.parse_args()
    a.dsplan = os.path.abspath(a.dsplan)  # the mutants run in a temporary working folder
    data = os.path.join(a.source, "tests", "data")
    with open(os.path.join(data, "validation", "published.json")) as f:
        validation = json.load(f)
    rows = validation
    sources = [
        # (name, document, how to feed a mutant: argument lists with {f} for its path)
        ("model", json.load(open(os.path.join(data, "models", "minimal.json"))),
         [["models", "{f}"], ["estimate", "--model", "{f}", "--gpus", "8", "--top", "1"]]),
        ("cluster", json.loads(subprocess.run([a.dsplan, "hw", "dgx-a100", "--json"], capture_output=True,
                                              text=True, check=True).stdout),
         [["hw", "{f}"], ["estimate", "--model", "gpt2", "--gpus", "16", "--hw", "{f}", "--top", "1"]]),
        ("hf", json.load(open(os.path.join(data, "models", "hf", "gpt2", "config.json"))),
         [["models", "{f}"]]),
        # One validation row, mutated inside a one-row file (validate reports a broken row
        # and goes on: exit 0 is allowed, a crash is not).
        ("row", rows[0], [["validate", "{f}"]]),
        # A calibration profile, the raw records `calibrate fit` refits, and a residual
        # model (XGBoost's JSON, learned below by `confirm` from the fake workload).
        ("profile", json.load(open(os.path.join(data, "calibrate", "h100_gpt2_quick_host_profile.json"))),
         [["calibrate", "show", "{f}"],
          ["estimate", "--model", "gpt2", "--gpus", "8", "--hw", "dgx-h100", "--profile", "{f}",
           "--top", "1"]]),
        ("records", json.load(open(os.path.join(data, "calibrate", "h100_gpt2_records.json"))),
         [["calibrate", "fit", "--records", "{f}", "--out", "fit_out.json"]]),
    ]
    problems, cases = [], 0
    with tempfile.TemporaryDirectory(prefix="dsplan-mutate-") as tmp:
        residual = learn_residual_model(a.dsplan, a.source, data)
        if residual is None:
            problems.append("could not learn a residual model with confirm and the fake workload")
        else:
            # On the cluster it learned on (the plan's "test-node"), so mutants reach the apply path.
            node = os.path.join(data, "confirm", "test_node_cluster.json")
            sources.append(("residual", residual, [["estimate", "--model", "gpt2", "--gpus", "2", "--hw",
                                                    node, "--residual", "{f}", "--top", "1"]]))
        # A plan for `confirm --plan`: a mutant that still parses runs the fake workload, so
        # only the top-level and whole-file mutants and the nulled model keys (about 40 runs).
        sources.append(("plan", json.load(open(os.path.join(data, "confirm", "plan_tiny.json"))),
                        [["confirm", "--plan", "{f}", "--top", "1", "--results-dir", "r", "--exps-dir", "e",
                          "--timeout", "30", "--", sys.executable,
                          os.path.join(a.source, "tests", "workloads", "fake_train.py"), "--deepspeed_config",
                          "ds.json"]]))
        for name, doc, commands in sources:
            for label, text in mutants(doc):
                if name == "plan" and not plan_mutant_kept(label):
                    continue
                if name == "row":  # a validation file is a JSON list of rows
                    try:
                        text = json.dumps([json.loads(text)])
                    except ValueError:
                        text = "[" + text
                path = os.path.join(tmp, name + ".json")
                with open(path, "w") as f:
                    f.write(text)
                for cmd in commands:
                    cases += 1
                    codes = []
                    # confirm's exit 1 is an outcome (no configuration ran), not a crash
                    allowed = (0, 1, 2) if cmd[0] == "confirm" else (0, 2)
                    found = check(a.dsplan, [c.replace("{f}", path) for c in cmd], tmp,
                                  "%s (%s)" % (name, label), codes, allowed)
                    out = os.path.join(tmp, "fit_out.json")  # calibrate fit's profile: only on success
                    if os.path.exists(out):
                        if codes != [0] or not os.path.getsize(out):
                            found.append("%s (%s): fit_out.json written by a failed run" % (name, label))
                        os.remove(out)
                    for folder in ("r", "e"):  # confirm's folders: none after bad input
                        if codes == [2] and os.path.isdir(os.path.join(tmp, folder)) and \
                                os.listdir(os.path.join(tmp, folder)):
                            found.append("%s (%s): exit 2 left files in %s/" % (name, label, folder))
                        shutil.rmtree(os.path.join(tmp, folder), ignore_errors=True)
                    problems += found
        leftovers = os.listdir(tmp)
        if sorted(leftovers) != sorted({n + ".json" for n, _, _ in sources}):
            problems.append("files left in the working folder: %s" % leftovers)
    print("%d mutant runs, %d problems" % (cases, len(problems)))
    for p in problems[:40]:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
