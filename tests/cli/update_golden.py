#!/usr/bin/env python3
"""Regenerates the "expect" of dsplan's golden CLI cases (tests/cli/cases/*.json) from the
current binary, and prints what moved beyond the tolerances so the change can be reviewed
before committing (then read `git diff tests/cli/cases`).

  tests/cli/update_golden.py [--dsplan BIN] [--check] [--force] [NAME ...]

NAME is a case file's name without .json (default: every case). --check only reports the
differences and exits 1 when there are any. A case whose output is still within tolerance
is left untouched (so diffs show only real moves) unless --force. Everything but "expect"
in a case file (args, checks, tolerance, ignore) is kept as written.
"""
import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_harness as h  # noqa: E402

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")


def write_case(path, case):
    # args first, expect last, so diffs of the arguments stay readable.
    ordered = {k: case[k] for k in ["description", "args", "checks", "tolerance", "ignore"] if k in case}
    ordered.update({k: v for k, v in case.items() if k not in ordered and k != "expect"})
    ordered["expect"] = case["expect"]
    with open(path + ".tmp", "w") as f:
        json.dump(ordered, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsplan", help="dsplan binary (default: $DSPLAN or the newest build*/dsplan)")
    ap.add_argument("--check", action="store_true", help="report differences only; write nothing")
    ap.add_argument("--force", action="store_true", help="rewrite cases that are within tolerance too")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    dsplan, src = h.find_dsplan(a.dsplan), h.source_dir()
    paths = [os.path.join(CASES, n + ".json") for n in a.names] or sorted(glob.glob(os.path.join(CASES, "*.json")))
    print("using %s" % dsplan)
    changed = 0
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        case = h.load_case(path)
        doc, problems = h.run_json_case(dsplan, case["args"], src)
        if doc is None or problems:
            print("%s: cannot regenerate:\n  %s" % (name, "\n  ".join(problems)))
            return 2
        diffs = h.compare(case["expect"], doc, case.get("tolerance"), case.get("ignore")) \
            if "expect" in case else ["new case"]
        if not a.check and (diffs or a.force):  # write first: a closed pipe must not lose it
            case["expect"] = doc
            write_case(path, case)
        if diffs:
            changed += 1
            print("%s: %d difference(s)%s" % (name, len(diffs), "" if a.check else ", rewritten"))
            for d in diffs[:40]:
                print("  " + d)
            if len(diffs) > 40:
                print("  ... %d more" % (len(diffs) - 40))
        else:
            print("%s: within tolerance%s" % (name, ", rewritten" if a.force and not a.check else ""))
    return 1 if a.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
