"""Shared helpers of dsplan's CLI tests: run the binary, expand path placeholders in
arguments, normalise machine-specific paths out of its JSON, and compare JSON documents
structurally within per-field tolerances.

Placeholders in a case's "args": {src} = source tree, {data} = tests/data, {tmp} = a fresh
temporary folder for this run. dsplan runs with {tmp} as its working directory, so no case
depends on where ctest was started. Only the Python 3 standard library is used.
"""
import json
import os
import re
import subprocess
import tempfile

# Relative tolerance by key name (the last component of the JSON path). Memory figures are
# allowed 2%, time and throughput figures 5%; every other float must agree to 1e-9
# (hardware and model figures are copied, not modelled). Integers, strings and booleans
# must be equal. ABS_FLOOR keeps figures that are ~0 (no bubble, no offload) from failing
# on noise: a difference below it always passes.
TIME_KEYS = {"step_s", "compute_s", "comm_exposed_s", "bubble_s", "optimizer_s", "offload_s", "contention_s",
             "samples_per_s", "tokens_per_s", "tflops_per_gpu", "hw_tflops_per_gpu", "mfu"}
MEMORY_REL, TIME_REL, OTHER_REL = 0.02, 0.05, 1e-9
MEMORY_ABS_FLOOR_GIB, TIME_ABS_FLOOR = 1e-3, 1e-6
# Paths whose value varies from run to run (wall time): only the type is compared.
# The numbers of each config's accuracy band are the table of estimator/search/evidence.cc,
# which ctest cli.validate_evidence_bands checks against the validation rows; the goldens
# check that each config has its band and its regime (a string, compared).
DEFAULT_IGNORE = {"search.seconds", "configs.evidence.runs", "configs.evidence.median_abs_error",
                  "configs.evidence.measured_over_predicted", "configs.evidence.memory.runs",
                  "configs.evidence.memory.median_abs_error", "configs.evidence.memory.measured_over_predicted",
                  "configs.evidence.middle_80", "configs.evidence.memory.middle_80"}

# Text that must never reach a user: crashes, uncaught exceptions, sanitizer reports.
CRASH_MARKERS = ["terminate called", "what():", "Segmentation fault", "Aborted", "core dumped",
                 "Traceback (most recent call last)", "internal error", "AddressSanitizer",
                 "stack trace", "Assertion `"]


def source_dir():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def expand(args, src, tmp):
    data = os.path.join(src, "tests", "data")
    return [a.replace("{src}", src).replace("{data}", data).replace("{tmp}", tmp) for a in args]


def run_dsplan(dsplan, args, src, tmp, timeout=60):
    """Runs dsplan with expanded args in `tmp`; returns (exit status, stdout, stderr)."""
    proc = subprocess.run([dsplan] + expand(args, src, tmp), cwd=tmp, capture_output=True,
                          text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def normalise(doc, src, tmp):
    """Replaces the machine's source and temporary paths inside every string of `doc`."""
    if isinstance(doc, dict):
        return {k: normalise(v, src, tmp) for k, v in doc.items()}
    if isinstance(doc, list):
        return [normalise(v, src, tmp) for v in doc]
    if isinstance(doc, str):
        return doc.replace(os.path.realpath(tmp), "{tmp}").replace(tmp, "{tmp}").replace(src, "{src}")
    return doc


def crash_markers(text):
    return [m for m in CRASH_MARKERS if m in text]


def run_json_case(dsplan, args, src):
    """Runs a case that must succeed and print one JSON document; returns (doc, problems)."""
    with tempfile.TemporaryDirectory(prefix="dsplan-cli-") as tmp:
        code, out, err = run_dsplan(dsplan, args, src, tmp)
        problems = []
        if code != 0:
            problems.append("exit status %d, expected 0; stderr:\n%s" % (code, err))
        problems += ["stderr contains %r" % m for m in crash_markers(err)]
        try:
            doc = json.loads(out)
        except ValueError as e:
            return None, problems + ["stdout is not one JSON document (%s):\n%s" % (e, out[:2000])]
        return normalise(doc, src, tmp), problems


def _tolerance(key, path, overrides):
    if path in overrides:
        return overrides[path], 0.0
    if key in overrides:
        return overrides[key], 0.0
    if key.endswith("_gib"):
        return MEMORY_REL, MEMORY_ABS_FLOOR_GIB
    if key in TIME_KEYS:
        return TIME_REL, TIME_ABS_FLOOR
    return OTHER_REL, 0.0


def compare(expected, actual, overrides=None, ignore=None, path=""):
    """Lists every difference between two JSON values beyond the tolerances, as
    'path: explanation' strings (empty when they agree)."""
    overrides = overrides or {}
    ignore = DEFAULT_IGNORE | set(ignore or [])
    key = path.rsplit(".", 1)[-1]
    key = re.sub(r"\[\d+\]$", "", key)
    where = path or "(root)"
    if isinstance(expected, bool) or isinstance(actual, bool):
        return [] if expected is actual else ["%s: expected %r, got %r" % (where, expected, actual)]
    numeric = (int, float)
    if isinstance(expected, numeric) and isinstance(actual, numeric):
        if _strip_indices(path) in ignore:
            return []
        if isinstance(expected, int) and isinstance(actual, int):
            return [] if expected == actual else ["%s: expected %d, got %d (integers must match)"
                                                  % (where, expected, actual)]
        rel, floor = _tolerance(key, _strip_indices(path), overrides)
        diff = abs(actual - expected)
        if diff <= floor or diff <= rel * abs(expected):
            return []
        change = "%+.2f%%" % (100 * (actual - expected) / expected) if expected else "from 0"
        return ["%s: expected %.6g, got %.6g (%s, tolerance %g%%)" % (where, expected, actual, change, 100 * rel)]
    if type(expected) is not type(actual):
        return ["%s: expected a %s, got a %s (%r)" % (where, type(expected).__name__,
                                                      type(actual).__name__, actual)]
    if isinstance(expected, dict):
        problems = []
        missing = sorted(set(expected) - set(actual))
        extra = sorted(set(actual) - set(expected))
        if missing:
            problems.append("%s: keys missing: %s" % (where, ", ".join(missing)))
        if extra:
            problems.append("%s: unexpected keys: %s" % (where, ", ".join(extra)))
        for k in sorted(set(expected) & set(actual)):
            problems += compare(expected[k], actual[k], overrides, ignore, path + "." + k if path else k)
        return problems
    if isinstance(expected, list):
        problems = []
        if len(expected) != len(actual):
            problems.append("%s: expected %d items, got %d" % (where, len(expected), len(actual)))
        for i, (e, a) in enumerate(zip(expected, actual)):
            problems += compare(e, a, overrides, ignore, "%s[%d]" % (path, i))
        return problems
    return [] if expected == actual else ["%s: expected %r, got %r" % (where, expected, actual)]


def _strip_indices(path):
    return re.sub(r"\[\d+\]", "", path)


def load_case(path):
    with open(path) as f:
        return json.load(f)


def find_dsplan(given):
    """The dsplan binary: --dsplan, $DSPLAN, or the newest build*/dsplan of the tree."""
    if given:
        return os.path.abspath(given)
    if os.environ.get("DSPLAN"):
        return os.path.abspath(os.environ["DSPLAN"])
    src = source_dir()
    found = [os.path.join(src, d, "dsplan") for d in os.listdir(src) if d.startswith("build")]
    found = [f for f in found if os.access(f, os.X_OK)]
    if not found:
        raise SystemExit("no dsplan binary: pass --dsplan PATH or set DSPLAN")
    return max(found, key=os.path.getmtime)
