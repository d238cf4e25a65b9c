# Timing a GPU operation from Python the way session 22's scripts do: warm-up launches, then
# three batches of back-to-back launches between CUDA events; the median batch's time per
# launch, in seconds. Shared by fp8_gemm_k.py and elementwise_rates.py (run from the
# repository root as `python3 scripts/NAME.py`, which puts scripts/ on the import path).
# time_each: session 42's way (moe_layer_profile.py, grouped_gemm_rates.py, atomic_rows.py,
# wave_fill_gemms.py), each launch alone between events, for operations long enough to time
# one by one; cuda_torch: their check for PyTorch and a GPU. torch is imported where used, so
# that a script can import this module before it knows PyTorch is there.
import statistics
import sys


def cuda_torch(script):
    """PyTorch, when it imports and sees a CUDA device; else `script` says which is missing and
    the process exits with status 3."""
    try:
        import torch
    except ImportError as e:
        print("%s: PyTorch is not available: %s" % (script, e), file=sys.stderr)
        sys.exit(3)
    if not torch.cuda.is_available():
        print("%s: no CUDA device" % script, file=sys.stderr)
        sys.exit(3)
    return torch


def time_op(fn, repeats, warmup=5):
    import torch
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
    import torch
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
