#!/usr/bin/env python3
"""Cross-check of dsplan's calibration against PyTorch on the same GPU (issue "calibrate",
docs/calibration.md "Pending: real-GPU steps", step 4).

Times torch.matmul for the given shape and dtype (default bf16 8192x8192x8192) with CUDA
events after warm-up, takes the median, and compares it with the record of the same shape
and dtype in a dsplan profile or raw-records file. Prints one JSON object:
  {"shape": [m, n, k], "dtype": ..., "torch_tflops": ..., "dsplan_tflops": ..., "ratio": ...,
   "within_10pct": ..., "torch": version, "device": name}
Exit status: 0 measured (whatever the ratio), 2 bad arguments or no matching record,
3 PyTorch or a CUDA device is not available (the message says which).
"""
import argparse
import json
import statistics
import sys


def find_record(path, m, n, k, dtype):
    with open(path) as f:
        doc = json.load(f)
    records = doc.get("records", doc)  # a profile holds its raw records under "records"
    for r in records.get("gemm", []):
        if (r.get("m"), r.get("n"), r.get("k"), r.get("dtype")) == (m, n, k, dtype):
            return r
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("profile", help="dsplan profile or raw-records JSON")
    p.add_argument("--shape", default="8192,8192,8192", help="M,N,K (default 8192,8192,8192)")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--repeats", type=int, default=30)
    a = p.parse_args()
    try:
        m, n, k = (int(x) for x in a.shape.split(","))
    except ValueError:
        print("torch_gemm_check: --shape must be three integers M,N,K", file=sys.stderr)
        return 2
    try:
        rec = find_record(a.profile, m, n, k, a.dtype)
    except (OSError, ValueError) as e:
        print("torch_gemm_check: cannot read %s: %s" % (a.profile, e), file=sys.stderr)
        return 2
    if rec is None:
        print("torch_gemm_check: no %s %dx%dx%d GEMM record in %s" % (a.dtype, m, n, k, a.profile),
              file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("torch_gemm_check: PyTorch is not installed", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("torch_gemm_check: no CUDA device visible to PyTorch", file=sys.stderr)
        return 3
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[a.dtype]
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means the fp32 pipe, as in dsplan
    x = torch.randn(m, k, device="cuda", dtype=dt)
    y = torch.randn(k, n, device="cuda", dtype=dt)
    for _ in range(a.warmup):
        torch.matmul(x, y)
    torch.cuda.synchronize()
    times_ms = []
    for _ in range(a.repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(x, y)
        stop.record()
        stop.synchronize()
        times_ms.append(start.elapsed_time(stop))
    t = statistics.median(times_ms) * 1e-3
    torch_tflops = 2.0 * m * n * k / t / 1e12
    dsplan_tflops = float(rec["tflops"])
    ratio = dsplan_tflops / torch_tflops
    print(json.dumps({"shape": [m, n, k], "dtype": a.dtype, "torch_tflops": torch_tflops,
                      "dsplan_tflops": dsplan_tflops, "ratio": ratio,
                      "within_10pct": abs(ratio - 1.0) <= 0.10, "torch": torch.__version__,
                      "device": torch.cuda.get_device_name(0)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
