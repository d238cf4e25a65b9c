#!/usr/bin/env python3
"""A stand-in for a DeepSpeed training script that follows the autotuner's metric protocol
without a GPU, for dsplan confirm's tests (pure Python, runs in well under a second).

It reads the ds_config named by --deepspeed_config / --deepspeed, takes the micro-batch
size from the ds_config or from a mapped flag (--per_device_train_batch_size), and writes
autotuning.metric_path with a throughput that is a deterministic function of the config.
--mode (or --when KEY=MODE, KEY being "mbs4" or "z1_mbs4") makes it misbehave instead:
  ok         write metrics, exit 0
  oom        print PyTorch's CUDA out-of-memory traceback to stderr, exit 1
  hang       sleep far longer than any test timeout
  crash      print "Segmentation fault" and exit 139
  raise      raise an ordinary Python exception (exit 1)
  nometrics  exit 0 without writing metrics
  errorword  print lines containing "error" to stderr, then succeed like ok
  slow       like ok after sleeping --sleep seconds (for interrupting a run)
  overflow   print three DeepSpeed fp16 overflow lines to stdout, then succeed like ok
  bigoom     like oom after 20 MiB of other stderr lines (confirm reads a log's end)
--rules-file PATH adds KEY=MODE lines from PATH when it exists (the command stays the same
while a test changes the behaviour, so that confirm may reuse earlier results).
It writes its pid to --pid-file when given (tests check the process is gone).
"""
import argparse
import json
import os
import sys
import time

STAGE_EFFICIENCY = {0: 1.0, 1: 0.97, 2: 0.93, 3: 0.75}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--deepspeed", nargs="?", const=True, default=None)
    p.add_argument("--deepspeed_config", default=None)
    p.add_argument("--per_device_train_batch_size", type=int, default=None)
    p.add_argument("--gradient_accumulation_steps", type=int, default=None)
    p.add_argument("--checkpoint-activations", action="store_true")
    p.add_argument("--mode", default="ok")
    p.add_argument("--when", action="append", default=[])
    p.add_argument("--rules-file", default=None)
    p.add_argument("--sleep", type=float, default=30.0)
    p.add_argument("--pid-file", default=None)
    args, _unknown = p.parse_known_args()  # Megatron-style flags are accepted and ignored
    return args


def config_path(args):
    if args.deepspeed_config:
        return args.deepspeed_config
    if isinstance(args.deepspeed, str):
        return args.deepspeed
    sys.exit("fake_train: no --deepspeed_config given")


def choose_mode(args, stage, mbs):
    rules = list(args.when)
    if args.rules_file and os.path.exists(args.rules_file):
        with open(args.rules_file) as f:
            rules += [line.strip() for line in f if line.strip()]
    for rule in rules:
        key, _, mode = rule.partition("=")
        if key in ("mbs%d" % mbs, "z%d_mbs%d" % (stage, mbs)):
            return mode
    return args.mode


def write_metrics(ds, mbs, gas, stage):
    dp = ds["train_batch_size"] // (mbs * gas)
    throughput = 250.0 * mbs / (mbs + 1.0) * STAGE_EFFICIENCY[stage]  # samples/s
    latency_us = ds["train_batch_size"] / throughput * 1e6  # DeepSpeed writes microseconds
    metrics = {
        "throughput": throughput,
        "latency": latency_us,
        "FLOPS_per_gpu": throughput * 1e9 / dp,
        "peak_memory_GiB": 2.0 + 1.4 * mbs,
    }
    path = ds.get("autotuning", {}).get("metric_path") or "autotuning_metric.json"
    with open(path, "w") as f:
        json.dump(metrics, f)


def main():
    args = parse_args()
    if args.pid_file:
        with open(args.pid_file, "w") as f:
            f.write(str(os.getpid()))
    with open(config_path(args)) as f:
        ds = json.load(f)
    mbs = args.per_device_train_batch_size or ds["train_micro_batch_size_per_gpu"]
    gas = args.gradient_accumulation_steps or ds.get("gradient_accumulation_steps", 1)
    stage = ds.get("zero_optimization", {}).get("stage", 0)
    mode = choose_mode(args, stage, mbs)
    print("fake_train argv:", " ".join(sys.argv[1:]), flush=True)
    print("fake_train mbs=%d gas=%d stage=%d mode=%s" % (mbs, gas, stage, mode), flush=True)
    if mode == "bigoom":
        line = "step 1 loss 7.0 (a chatty training loop)\n" * 1024
        for _ in range(20 * 1024 * 1024 // len(line) + 1):
            sys.stderr.write(line)
        mode = "oom"
    if mode == "oom":
        sys.stderr.write(
            "Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
            "total capacity of 79.15 GiB of which 1.02 GiB is free.\n")
        sys.exit(1)
    if mode == "hang":
        time.sleep(600)
    if mode == "crash":
        sys.stderr.write("Segmentation fault (core dumped)\n")
        sys.exit(139)
    if mode == "raise":
        raise RuntimeError("the data loader found no shards")
    if mode == "nometrics":
        sys.exit(0)
    if mode == "errorword":
        sys.stderr.write("[W] error_handler.py: torch.distributed.elastic error handler installed\n")
        sys.stderr.write("UserWarning: this is not an error\n")
    if mode == "slow":
        time.sleep(args.sleep)
    if mode == "overflow":
        for scale in (65536, 32768, 16384):
            print("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d"
                  % (scale, scale // 2), flush=True)
    write_metrics(ds, mbs, gas, stage)


if __name__ == "__main__":
    main()
