#!/usr/bin/env python3
"""Sustained GEMM rate on one GPU: does a large bf16 GEMM slow down once the GPU has drawn
full power for a while (docs/accuracy.md, "Session 37")?

dsplan prices Hopper's large GEMMs at 0.70 of the datasheet peak. calibrate times short
bursts; training runs the same GEMMs back to back for hours at the power cap. This script
runs one training-sized GEMM (default bf16 8192 x 28672 x 4096, Llama 70B's FC1 at 8K
tokens) back to back for --seconds, and reports each one-second window's TFLOP/s with the
SM clock and power nvidia-smi reads at its end. Prints one JSON object:
  {"shape", "dtype", "device", "torch", "peak_tflops",
   "windows": [{"t_s", "tflops", "sm_clock_mhz", "power_w"}, ...],
   "first_window_tflops", "last_10s_median_tflops", "sustained_over_first",
   "last_10s_fraction_of_peak"}
Exit status: 0 measured, 2 bad arguments, 3 PyTorch or a CUDA device is not available.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time


def smi():
    """SM clock (MHz) and power draw (W) of GPU 0, or (None, None) without nvidia-smi."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                              "-i", "0"], capture_output=True, text=True, timeout=10).stdout.strip()
        clock, power = (x.strip() for x in out.split(","))
        return float(clock), float(power)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None, None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shape", default="8192,28672,4096", help="M,N,K (default 8192,28672,4096)")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    p.add_argument("--seconds", type=float, default=60.0, help="how long to run (default 60)")
    p.add_argument("--peak-tflops", type=float, default=989.4, help="datasheet dense peak (default H100 SXM bf16)")
    a = p.parse_args()
    try:
        m, n, k = (int(x) for x in a.shape.split(","))
        if min(m, n, k) < 1 or not 1 <= a.seconds <= 3600 or a.peak_tflops <= 0:
            raise ValueError
    except ValueError:
        print("sustained_gemm: --shape takes three positive integers M,N,K, --seconds 1-3600, --peak-tflops > 0",
              file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("sustained_gemm: PyTorch is not installed", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("sustained_gemm: no CUDA device", file=sys.stderr)
        return 3
    dt = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    x = torch.randn(m, k, device="cuda", dtype=dt)
    w = torch.randn(k, n, device="cuda", dtype=dt)
    y = torch.empty(m, n, device="cuda", dtype=dt)
    flops = 2.0 * m * n * k
    for _ in range(5):
        torch.matmul(x, w, out=y)
    torch.cuda.synchronize()
    windows, start = [], time.perf_counter()
    while time.perf_counter() - start < a.seconds:
        t0, count = time.perf_counter(), 0
        while time.perf_counter() - t0 < 1.0:  # queue ~1 s of GEMMs, then wait for them
            for _ in range(8):
                torch.matmul(x, w, out=y)
            count += 8
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        clock, power = smi()
        windows.append({"t_s": round(time.perf_counter() - start, 2), "tflops": flops * count / elapsed / 1e12,
                        "sm_clock_mhz": clock, "power_w": power})
    last = [wd["tflops"] for wd in windows if wd["t_s"] >= windows[-1]["t_s"] - 10.0]
    first = windows[0]["tflops"]
    sustained = statistics.median(last)
    print(json.dumps({"shape": [m, n, k], "dtype": a.dtype, "device": torch.cuda.get_device_name(0),
                      "torch": torch.__version__, "peak_tflops": a.peak_tflops, "windows": windows,
                      "first_window_tflops": first, "last_10s_median_tflops": sustained,
                      "sustained_over_first": sustained / first,
                      "last_10s_fraction_of_peak": sustained / a.peak_tflops}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
