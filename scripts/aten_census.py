#!/usr/bin/env python3
"""ATen census of one training step of dsplan's reference workload, without a GPU.

Builds examples/gpt_model.py from the workload's flags on fake CUDA tensors
(torch._subclasses.FakeTensorMode), runs the forward under CUDA autocast and the backward
through a small engine of its own, and reports what PyTorch dispatches for a CUDA device:
  - every ATen operator of the forward of one layer, with input and output shapes, dtypes
    and contiguity (the operators PyTorch's CUDA dispatch chose, autocast's casts included);
  - operator counts per region (embedding, each layer, head) and for the whole backward;
  - the tensors autograd saves for the backward of one layer and of the head, in MiB (the
    weights themselves left out; autocast's 16-bit copies of them counted).
No kernel runs: shapes and dtypes come from PyTorch's meta functions, so a full-size
configuration costs no memory. Needs only the torch package (any build).

What it does not see: launches below the ATen level (FlashAttention's backward is 3 kernels,
torch's fused RMSNorm backward 2, cudaMemsetAsync zero-fills), the optimizer and gradient
clipping, and anything that depends on a real device (which SDPA backend is picked: the
census calls the flash backend directly). The engine runs each autograd node in order with
gradients cast to their tensor's dtype, as torch's engine does, under no_grad.

docs/accuracy.md, "Session 28", compares it with the session-27 H200 profiles (GEMM count
339 of 339 for Llama 3.2 1B) and uses it to find torch.nn.RMSNorm's fallback.

With --hf DIR the model is instead a Hugging Face config.json's (transformers installed;
a causal LM, or an encoder such as BERT as a masked LM),
built in fp32 as Trainer's amp builds it (or in bf16 without autocast with --bf16-weights,
as DeepSpeed's and FSDP's bf16 run it), trained without a KV cache; SDPA's enable_gqa is
taken as the flash kernel's native GQA (no repeat is counted).

Usage: aten_census.py CMD.txt|"WORKLOAD FLAGS" [--mbs N] [--layer I] [--ops]
       aten_census.py --hf CONFIG_DIR --mbs N --seq S [--attn sdpa|eager] [--bf16-weights]
                      [--layer I] [--ops]
"""
import argparse
import collections
import os
import shlex
import sys

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import train_gpt  # noqa: E402  (the workload's own flag parser and model)

NO_KERNEL = ("aten.view", "aten._unsafe_view", "aten.transpose", "aten.t.", "aten.slice", "aten.expand",
             "aten.split", "aten.unsqueeze", "aten.squeeze", "aten.permute", "aten.detach", "aten.alias",
             "aten.select", "aten._reshape_alias", "aten.as_strided", "aten.unbind", "aten.lift_fresh",
             "prim.")


def describe(t):
    return "%s %s%s" % (tuple(t.shape), str(t.dtype)[6:], "" if t.is_contiguous() else " strided")


class Census(TorchDispatchMode):
    """Records every operator that launches work, tagged with the region running it."""

    def __init__(self):
        super().__init__()
        self.ops, self.region, self.quiet = [], "embedding", False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = str(func)
        if not name.startswith(NO_KERNEL) and not self.quiet:
            outs = out if isinstance(out, (tuple, list)) else [out]
            self.ops.append((self.region, name,
                             [describe(a) for a in args if isinstance(a, torch.Tensor)],
                             [describe(o) for o in outs if isinstance(o, torch.Tensor)]))
        return out


def run_backward(loss):
    """torch's engine, in order on this thread (its device threads need a real GPU)."""
    deps, seen, stack = collections.Counter(), {loss.grad_fn}, [loss.grad_fn]
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is not None:
                deps[nxt] += 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    grads = collections.defaultdict(dict)
    grads[loss.grad_fn][0] = torch.ones_like(loss)
    ready = [loss.grad_fn]
    with torch.no_grad():
        while ready:
            node = ready.pop()
            got = grads.pop(node, {})
            if type(node).__name__ == "AccumulateGrad":
                continue
            meta = node._input_metadata
            args = [got.get(i) for i in range(len(meta))]
            args = [a.to(m.dtype) if a is not None and a.dtype != m.dtype else a for a, m in zip(args, meta)]
            outs = node(*args)
            outs = outs if isinstance(outs, tuple) else (outs,)
            for (nxt, slot), g in zip(node.next_functions, outs):
                if nxt is None:
                    continue
                if g is not None:  # a second gradient for one input: the engine's sum
                    grads[nxt][slot] = g if slot not in grads[nxt] else grads[nxt][slot] + g
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    ready.append(nxt)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("flags", nargs="?", help="a confirm run's cmd.txt, or the workload's flags in one string")
    p.add_argument("--hf", help="a Hugging Face config.json's folder instead of the workload's flags")
    p.add_argument("--seq", type=int, help="sequence length (--hf)")
    p.add_argument("--bf16-weights", action="store_true", help="--hf: bf16 weights, no autocast")
    p.add_argument("--attn", default="sdpa", choices=["sdpa", "eager"],
                   help="--hf: transformers' attention implementation (eager: the matmul path)")
    p.add_argument("--mbs", type=int, help="micro-batch (default: the flags' --micro-batch-size)")
    p.add_argument("--layer", type=int, default=1, help="the layer whose operators are listed")
    p.add_argument("--ops", action="store_true", help="list the layer's forward operators")
    a = p.parse_args()
    if not a.hf and not a.flags or a.hf and not (a.mbs and a.seq):
        p.error("give the workload's flags, or --hf DIR with --mbs and --seq")
    dtype, argv = torch.bfloat16, []
    if not a.hf:
        text = open(a.flags).read() if os.path.isfile(a.flags) else a.flags
        argv = [x for x in shlex.split(text) if not x.endswith(".py") and not x.startswith("python")]
        if "--deepspeed_config" in argv:
            i = argv.index("--deepspeed_config")
            del argv[i:i + 2]
        args = train_gpt.parse_args(argv)
        dtype = torch.float16 if "--fp16" in argv else torch.bfloat16
    census, saved = Census(), collections.defaultdict(dict)

    def flash(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False, **_):
        # SDPA's pick of a backend needs a device: the flash backend, which takes GQA natively.
        if enable_gqa and k.shape[1] != q.shape[1]:
            census.quiet = True
            k, v = (t.repeat_interleave(q.shape[1] // t.shape[1], 1) for t in (k, v))
            census.quiet = False
        if torch.is_autocast_enabled("cuda"):
            q, k, v = (t.to(dtype) for t in (q, k, v))
        return torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, scale=scale)[0]
    torch.nn.functional.scaled_dot_product_attention = flash

    params = set()  # the weights' storages: saved for backward but not activations

    def pack(t):
        s = t.untyped_storage()
        if s._cdata not in params:
            saved[census.region][s._cdata] = (s.nbytes(), describe(t))
        return t

    def enter(region):
        census.region = region

    with FakeTensorMode(allow_non_fake_inputs=True):
        torch.set_default_device("cuda")
        if a.hf:
            import transformers
            cfg = transformers.AutoConfig.from_pretrained(a.hf)
            cfg._attn_implementation = a.attn
            wdtype = torch.bfloat16 if a.bf16_weights else torch.float32
            try:
                model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=wdtype)
                kwargs = {"use_cache": False}
            except ValueError:  # an encoder (BERT): masked language modelling
                model = transformers.AutoModelForMaskedLM.from_config(cfg, dtype=wdtype)
                kwargs = {}
            blocks = next(m for m in model.modules()
                          if isinstance(m, torch.nn.ModuleList) and len(m) == cfg.num_hidden_layers)
            mbs, tokens = a.mbs, torch.randint(cfg.vocab_size, (a.mbs, a.seq))
            step = lambda: model(input_ids=tokens, labels=tokens, **kwargs).loss  # noqa: E731
        else:
            model = train_gpt.build_model(args, torch)
            blocks = model.blocks
            mbs = a.mbs or args.micro_batch_size
            tokens = torch.randint(args.vocab_size, (mbs, args.seq_length + 1))
            step = lambda: model(tokens)  # noqa: E731
        params.update(p.untyped_storage()._cdata for p in model.parameters())
        for i, blk in enumerate(blocks):
            blk.register_forward_pre_hook(lambda m, x, *_, i=i, **__: enter("layer %d" % i))
        blocks[-1].register_forward_hook(lambda m, x, y: enter("head"))  # what runs after the blocks
        with census, torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            # torch.autocast("cuda") switches itself off without a GPU: set its state directly.
            torch.set_autocast_enabled("cuda", not a.bf16_weights)
            torch.set_autocast_dtype("cuda", dtype)
            torch.autocast_increment_nesting()
            loss = step()
            torch.autocast_decrement_nesting()
            torch.set_autocast_enabled("cuda", False)
            enter("backward")
            run_backward(loss)

    regions = collections.Counter(r for r, *_ in census.ops)
    layer = "layer %d" % a.layer
    print("torch %s, micro-batch %d: %d operators (embedding %d, %s %d each, head %d, backward %d)"
          % (torch.__version__, mbs, len(census.ops), regions["embedding"], layer, regions[layer],
             regions["head"], regions["backward"]))
    by_op = collections.Counter(name for r, name, *_ in census.ops if r == "backward")
    print("backward by operator:", ", ".join("%s %d" % (n[5:], c) for n, c in by_op.most_common()))
    if a.ops:
        for r, name, ins, outs in census.ops:
            if r == layer:
                print("  %s(%s) -> %s" % (name[5:], ", ".join(ins), ", ".join(outs)))
    for r in (layer, "head"):
        rows = sorted(saved[r].values(), key=lambda v: -v[0])
        print("saved for backward, %s: %.1f MiB" % (r, sum(v[0] for v in rows) / 2**20))
        for nbytes, what in rows:
            if nbytes >= 2**20:
                print("  %8.1f MiB  %s" % (nbytes / 2**20, what))


if __name__ == "__main__":
    main()
