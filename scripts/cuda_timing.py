# Timing a GPU operation from Python the way session 22's scripts do: warm-up launches, then
# three batches of back-to-back launches between CUDA events; the median batch's time per
# launch, in seconds. Shared by fp8_gemm_k.py and elementwise_rates.py (run from the
# repository root as `python3 scripts/NAME.py`, which puts scripts/ on the import path).
# time_each: session 42's way (moe_layer_profile.py, grouped_gemm_rates.py, atomic_rows.py),
# each launch alone between events, for operations long enough to time one by one.
import statistics

import torch


def time_op(fn, repeats, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeats):
            fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / repeats)
    return statistics.median(times)


def time_each(fn, repeats=20, warmup=5):
    """The median of `repeats` launches, each timed alone between CUDA events, in seconds."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)
