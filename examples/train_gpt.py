#!/usr/bin/env python3
"""dsplan's reference workload: a GPT training script on synthetic tokens that follows the
DeepSpeed autotuner's metric protocol, so `dsplan confirm` can measure any configuration.

Model shape: Megatron-style flags (what `dsplan confirm` passes: --num-layers, --hidden-size,
--num-attention-heads, --seq-length, --kv-channels, --add-qkv-bias, --qk-layernorm, ...) plus
the workload's own for Gemma-style blocks (--gated-gelu, --post-norms, --sliding-window,
--window-layers, --logit-softcap), or a Hugging Face config.json (--hf-config).
Configuration: the DeepSpeed config given by --deepspeed CONFIG or --deepspeed_config CONFIG
(batch sizes, precision, ZeRO stage and offload, gradient clipping, autotuning section).

With DeepSpeed importable (and not --no-deepspeed) the model is trained by
deepspeed.initialize(config=...): the engine itself times the profile steps, writes
autotuning.metric_path and exits after end_profile_step; an exit hook adds the peak memory.
Without DeepSpeed the PyTorch equivalents are used (DDP for ZeRO 0, ZeroRedundancyOptimizer for
ZeRO 1/2, FSDP FULL_SHARD for ZeRO 3, torch.utils.checkpoint, SDPA's flash or cuDNN kernel or
flash-attn's Triton one) and the script writes the same metrics itself; --fsdp-plan runs FSDP at
ZeRO 2 and 3 with FSDP's mixed precision (--fsdp-sharding, --fsdp-reduce-dtype, --fsdp-version:
FullyShardedDataParallel or fully_shard; fsdp_wrap.py).

metrics.json: throughput (samples/s), latency (microseconds per optimizer step, as DeepSpeed
writes it), FLOPS_per_gpu (model FLOP/s per GPU: 6 x params x tokens plus causal attention),
peak_memory_GiB (torch.cuda.max_memory_allocated on rank 0) and peak_reserved_GiB
(torch.cuda.max_memory_reserved: what the caching allocator held, fragmentation included).
Only data parallelism is implemented here: tensor/pipeline parallel degrees > 1 exit with an
explanation (use Megatron-DeepSpeed for those). Mixture-of-experts models (--num-experts,
moe_mlp.py) run with every expert on each GPU: expert parallel degrees > 1 exit likewise, and
FLOPS_per_gpu counts a token's top-k experts, not all of them.
"""
import argparse
import atexit
import json
import os
import socket
import sys
import time

from gpt_model import build_model, recompute_mode  # noqa: F401 (recompute_mode: the tests read it here)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--deepspeed", nargs="?", const=True, default=None, help="[CONFIG]")
    p.add_argument("--deepspeed_config", default=None)
    p.add_argument("--no-deepspeed", action="store_true", help="use the plain PyTorch path")
    p.add_argument("--local_rank", "--local-rank", type=int, default=None)
    p.add_argument("--hf-config", default=None, help="Hugging Face config.json for the shape")
    p.add_argument("--num-layers", type=int, default=12)
    p.add_argument("--hidden-size", type=int, default=768)
    p.add_argument("--num-attention-heads", type=int, default=12)
    p.add_argument("--num-query-groups", type=int, default=None)
    p.add_argument("--group-query-attention", action="store_true")
    p.add_argument("--ffn-hidden-size", type=int, default=None)
    p.add_argument("--vocab-size", type=int, default=50257)
    # Megatron's defaults: the vocabulary padded to a multiple of 128 x TP, dropout 0.1.
    p.add_argument("--make-vocab-size-divisible-by", type=int, default=128)
    p.add_argument("--hidden-dropout", type=float, default=0.1)
    p.add_argument("--attention-dropout", type=float, default=0.1)
    p.add_argument("--unfused-gelu", action="store_true", help="HF GPT-2's gelu_new, one kernel per op")
    p.add_argument("--seq-length", type=int, default=1024)
    p.add_argument("--max-position-embeddings", type=int, default=None)
    for flag in ("--swiglu", "--separate-qkv", "--separate-gate-up"):  # separate: HF BERT/Llama linears
        p.add_argument(flag, action="store_true")
    # Megatron-DeepSpeed spells the norm in lower case ("rmsnorm"); Megatron-LM "RMSNorm".
    p.add_argument("--normalization", default="LayerNorm",
                   type=lambda v: {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm"}.get(v, v),
                   choices=["LayerNorm", "RMSNorm"])
    p.add_argument("--eager-rmsnorm", action="store_true",
                   help="RMSNorm as Hugging Face's LlamaRMSNorm op chain, not torch.nn.RMSNorm")
    p.add_argument("--pure-16bit", action="store_true",
                   help="plain PyTorch: cast the model to the config's 16-bit dtype (optimizer states follow), "
                        "no autocast, no fp32 master weights (dsplan's --precision bf16-pure)")
    p.add_argument("--tf32", action="store_true",
                   help="fp32 matmuls on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32)")
    p.add_argument("--position-embedding-type", default="learned_absolute",
                   choices=["learned_absolute", "rope"])
    # Megatron-DeepSpeed's spellings of rotary positions and GQA (dsplan writes them for
    # --framework deepspeed plans); the pipeline switch and FA2 flag are its own too.
    p.add_argument("--use-rotary-position-embeddings", action="store_true")
    p.add_argument("--num-key-value-heads", type=int, default=None)
    p.add_argument("--no-pipeline-parallel", action="store_true", help="accepted; one pipeline stage here")
    p.add_argument("--untie-embeddings-and-output-weights", action="store_true")
    p.add_argument("--disable-bias-linear", action="store_true")
    # Megatron-LM's flags for Qwen-style blocks: head width, biases on Q/K/V only, q/k norms.
    p.add_argument("--kv-channels", type=int, default=None, help="head width (default hidden / heads)")
    p.add_argument("--add-qkv-bias", action="store_true", help="biases on Q, K and V even without others")
    p.add_argument("--qk-layernorm", action="store_true", help="a norm over each query and key head")
    p.add_argument("--qk-norm-full-width", action="store_true", help="with --qk-layernorm: over all heads (OLMo 2)")
    # The workload's own (no Megatron-LM flag): Gemma-style blocks.
    p.add_argument("--gated-gelu", action="store_true", help="GeGLU: a gated MLP with tanh GELU")
    p.add_argument("--post-norms", action="store_true", help="a norm after each sublayer too (Gemma 2/3)")
    p.add_argument("--sliding-window", type=int, default=None, help="keys each query attends to at most")
    p.add_argument("--window-layers", type=int, default=None, help="layers that window (default all)")
    p.add_argument("--window-size", default=None, help="Megatron-LM's; accepted, --sliding-window runs it")
    p.add_argument("--window-attn-skip-freq", default=None, help="Megatron-LM's; accepted")
    p.add_argument("--logit-softcap", type=float, default=None, help="logits = cap * tanh(logits / cap)")
    p.add_argument("--attn-softcap", type=float, default=None, help="scores = cap * tanh(scores / cap)")
    p.add_argument("--tensor-model-parallel-size", type=int, default=1)
    p.add_argument("--pipeline-model-parallel-size", type=int, default=1)
    p.add_argument("--num-layers-per-virtual-pipeline-stage", type=int, default=None)
    # Mixture of experts (moe_mlp.py), Megatron-Core's flags; expert parallelism 1 only.
    p.add_argument("--num-experts", type=int, default=None)
    p.add_argument("--moe-router-topk", type=int, default=2)
    p.add_argument("--moe-ffn-hidden-size", type=int, default=None)
    p.add_argument("--moe-layer-freq", default="1", help="N (every N-th layer) or [1,0,...] a layer")
    p.add_argument("--moe-shared-expert-intermediate-size", type=int, default=None)
    p.add_argument("--moe-grouped-gemm", action="store_true", help="torch._grouped_mm, else a loop")
    p.add_argument("--moe-router-force-load-balancing", action="store_true",
                   help="every expert the same number of tokens (benchmarks' routing)")
    p.add_argument("--moe-aux-loss-coeff", type=float, default=1e-2)
    p.add_argument("--moe-permute-fusion", action="store_true", help="permutation without atomics")
    p.add_argument("--moe-no-host-counts", action="store_true",
                   help="the workload's own: skip the per-layer host read of the expert counts")
    p.add_argument("--expert-model-parallel-size", type=int, default=1)
    p.add_argument("--expert-tensor-parallel-size", type=int, default=1)
    p.add_argument("--moe-token-dispatcher-type", default="alltoall", help="accepted; one GPU dispatches nothing")
    p.add_argument("--moe-enable-deepep", action="store_true", help="accepted; one GPU dispatches nothing")
    p.add_argument("--moe-router-num-groups", type=int, default=None, help="accepted; routing cost only")
    p.add_argument("--moe-router-group-topk", type=int, default=None, help="accepted; routing cost only")
    p.add_argument("--micro-batch-size", type=int, default=None)
    p.add_argument("--global-batch-size", type=int, default=None)
    p.add_argument("--recompute-activations", action="store_true", help="selective recompute")
    p.add_argument("--recompute-granularity", default=None, choices=["full", "selective"])
    p.add_argument("--recompute-method", default=None)
    p.add_argument("--recompute-num-layers", type=int, default=None)
    p.add_argument("--recompute-modules", nargs="+", default=None, help="Megatron-Core's; not run here")
    p.add_argument("--sequence-parallel", action="store_true")
    p.add_argument("--use-flash-attn", "--use-flash-attn-v2", action="store_true")
    # The attention kernel a plan pins (estimate --attention): Megatron-Core's backend
    # (flash: SDPA's FlashAttention; fused: SDPA's cuDNN attention) or Megatron-DeepSpeed's
    # Triton flag (flash-attn's flash_attn_triton, which must be installed).
    p.add_argument("--attention-backend", default=None, choices=["flash", "fused", "unfused", "auto"])
    p.add_argument("--use-flash-attn-triton", action="store_true")
    # Megatron-Core's overlap flags: the DeepSpeed engine takes its overlap from the config
    # (zero_optimization.overlap_comm), so they are accepted and change nothing here.
    p.add_argument("--overlap-grad-reduce", action="store_true")
    p.add_argument("--overlap-param-gather", action="store_true")
    p.add_argument("--optimizer", default="adam", choices=["adam", "sgd"],
                   help="accepted; the ds_config optimizer block is what runs")
    p.add_argument("--grad-reduce-in-bf16", action="store_true", help="accepted; DeepSpeed reduces as configured")
    p.add_argument("--cross-entropy-loss-fusion", action="store_true", help="accepted; the loss is torch's")
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--zero-stage", type=int, default=None)
    p.add_argument("--use-distributed-optimizer", action="store_true")
    # Megatron-FSDP (a Megatron plan at ZeRO 3): accepted; the DeepSpeed engine shards as the
    # config's stage 3 does, the stand-in for Megatron-FSDP's optim_grads_params.
    p.add_argument("--use-megatron-fsdp", action="store_true")
    p.add_argument("--data-parallel-sharding-strategy", default=None,
                   choices=["no_shard", "optim", "optim_grads", "optim_grads_params"])
    p.add_argument("--ckpt-format", default=None, help="accepted; the workload saves no checkpoint")
    p.add_argument("--cpu-offloading-num-layers", type=int, default=0,
                   help="Megatron's CPU activation offloading; accepted, not run here")
    # DeepSpeed's activation checkpointing (Megatron-DeepSpeed's flags): the recomputed layers
    # run under deepspeed.checkpointing.checkpoint, their inputs kept in host memory with
    # --checkpoint-in-cpu; --partition-activations splits them over TP ranks, of which this
    # workload has one.
    p.add_argument("--deepspeed-activation-checkpointing", action="store_true")
    p.add_argument("--partition-activations", action="store_true")
    p.add_argument("--checkpoint-in-cpu", action="store_true")
    # A plan priced as PyTorch FSDP (dsplan confirm passes these with --no-deepspeed): ZeRO 3
    # runs FULL_SHARD (HYBRID_SHARD with hybrid), ZeRO 2 SHARD_GRAD_OP, with FSDP's mixed
    # precision in the config's 16-bit dtype and gradients reduced in it or in fp32.
    p.add_argument("--fsdp-plan", action="store_true")
    p.add_argument("--fsdp-sharding", default="full", choices=["full", "hybrid"])
    p.add_argument("--fsdp-reduce-dtype", default="compute", choices=["compute", "fp32"])
    p.add_argument("--fsdp-version", type=int, default=1, choices=[1, 2], help="fsdp_wrap.py")
    p.add_argument("--train-iters", type=int, default=20, help="steps when autotuning is off")
    p.add_argument("--seed", type=int, default=1234)
    args = p.parse_args(argv)
    if args.use_rotary_position_embeddings:
        args.position_embedding_type = "rope"
    if args.num_key_value_heads is not None:
        args.group_query_attention, args.num_query_groups = True, args.num_key_value_heads
    return args


def apply_hf_config(args):
    """Overrides the shape flags from a Hugging Face config.json."""
    with open(args.hf_config) as f:
        c = json.load(f)

    def pick(*keys, default=None):
        for k in keys:
            if c.get(k) is not None:
                return c[k]
        return default

    args.num_layers = pick("num_hidden_layers", "n_layer", default=args.num_layers)
    args.hidden_size = pick("hidden_size", "n_embd", default=args.hidden_size)
    args.num_attention_heads = pick("num_attention_heads", "n_head", default=args.num_attention_heads)
    args.num_query_groups = pick("num_key_value_heads", default=args.num_query_groups)
    args.ffn_hidden_size = pick("intermediate_size", "n_inner", "ffn_dim", default=args.ffn_hidden_size)
    args.vocab_size = pick("vocab_size", default=args.vocab_size)
    args.max_position_embeddings = pick("max_position_embeddings", "n_positions",
                                        default=args.max_position_embeddings)
    kind = c.get("model_type")
    if kind in ("llama", "mistral", "qwen2", "qwen3", "phi3", "gemma", "gemma2", "gemma3_text", "olmo2"):
        args.swiglu, args.normalization, args.position_embedding_type = True, "RMSNorm", "rope"
        args.disable_bias_linear = True
        args.separate_qkv = args.separate_gate_up = kind != "phi3"  # phi3: qkv_proj, gate_up_proj
        args.kv_channels = pick("head_dim", default=256 if kind.startswith("gemma") else
                                128 if kind == "qwen3" else None)
        args.add_qkv_bias = kind == "qwen2"
        args.qk_layernorm = kind in ("qwen3", "gemma3_text", "olmo2")
        args.qk_norm_full_width = kind == "olmo2"  # its norms after the sublayers cost as before them
        if kind.startswith("gemma"):  # GeGLU, tied; Gemma 2 and 3: post-norms and windows
            args.swiglu, args.gated_gelu = False, True
            args.untie_embeddings_and_output_weights = False
            args.post_norms = kind != "gemma"
            args.logit_softcap = pick("final_logit_softcapping")
            args.attn_softcap = pick("attn_logit_softcapping")
    if kind == "starcoder2":  # GPT's block with GQA, rotary, separate q/k/v_proj and a window
        args.position_embedding_type, args.separate_qkv = "rope", True
        args.disable_bias_linear = c.get("use_bias") is False
    if kind in ("mistral", "phi3", "gemma2", "gemma3_text", "starcoder2") and pick("sliding_window"):
        args.sliding_window = pick("sliding_window")
        n = args.num_layers
        args.window_layers = {"gemma2": (n + 1) // 2,
                              "gemma3_text": n - n // pick("sliding_window_pattern", default=6)}.get(kind)
    args.untie_embeddings_and_output_weights |= c.get("tie_word_embeddings") is False
    # Hugging Face neither pads the vocabulary nor fuses GPT-2's gelu_new.
    args.make_vocab_size_divisible_by = 1
    args.hidden_dropout = pick("resid_pdrop", "hidden_dropout", "hidden_dropout_prob", "residual_dropout",
                               default=0.0)
    args.attention_dropout = pick("attn_pdrop", "attention_dropout", "attention_probs_dropout_prob",
                                  default=0.0)
    args.unfused_gelu = c.get("activation_function") == "gelu_new"


def ds_config_path(args):
    return args.deepspeed_config or (args.deepspeed if isinstance(args.deepspeed, str) else None)


def flops_per_sample(args, n_params):
    """6 x params per token plus the causal attention scores (halved by the mask)."""
    s = args.seq_length
    return s * (6 * n_params + 6 * args.num_layers * args.hidden_size * s)


class Metrics:
    """Times optimizer steps start..end (inclusive, 1-based) and writes the metrics file."""

    def __init__(self, torch, ds, path, start, end):
        self.torch, self.ds, self.path, self.start, self.end = torch, ds, path, start, end
        self.times = []

    def step_done(self, step, seconds):
        if self.start <= step <= self.end:
            self.times.append(seconds)

    def write(self, args, n_params, world):
        step_s = sum(self.times) / max(1, len(self.times))
        ds = self.ds
        batch = ds.get("train_batch_size") or (
            ds["train_micro_batch_size_per_gpu"] * ds["gradient_accumulation_steps"] * world)
        out = {"throughput": batch / step_s, "latency": step_s * 1e6,
               "FLOPS_per_gpu": flops_per_sample(args, n_params) * batch / world / step_s,
               "peak_memory_GiB": peak_memory_gib(self.torch),
               "peak_reserved_GiB": peak_reserved_gib(self.torch)}
        with open(self.path, "w") as f:
            json.dump(out, f)


def peak_memory_gib(torch):
    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else 0.0


def peak_reserved_gib(torch):
    return torch.cuda.max_memory_reserved() / 2**30 if torch.cuda.is_available() else 0.0


def add_peak_memory_at_exit(torch, path):
    """DeepSpeed writes metrics and calls exit(); this adds the peak memory afterwards."""
    def hook():
        try:
            with open(path) as f:
                m = json.load(f)
            m["peak_memory_GiB"] = peak_memory_gib(torch)
            m["peak_reserved_GiB"] = peak_reserved_gib(torch)
            with open(path, "w") as f:
                json.dump(m, f)
        except (OSError, ValueError):
            pass  # no metrics yet (the run failed earlier): nothing to add
    atexit.register(hook)


def init_distributed(torch):
    if "WORLD_SIZE" not in os.environ:  # a plain `python train_gpt.py`: a group of one
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(port))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group("nccl")
    return torch.distributed.get_rank(), torch.distributed.get_world_size(), local


def train_deepspeed(deepspeed, torch, args, ds, model, metric_path):
    init_distributed(torch)  # a plain `python train_gpt.py` too, without MPI discovery
    deepspeed.init_distributed()
    rank = torch.distributed.get_rank()
    if args.deepspeed_activation_checkpointing:  # configure() logs on rank 0: after init
        deepspeed.checkpointing.configure(None, partition_activations=False,
                                          checkpoint_in_cpu=args.checkpoint_in_cpu)
        model.checkpoint_fn = deepspeed.checkpointing.checkpoint
    if rank == 0 and ds.get("autotuning", {}).get("enabled"):
        add_peak_memory_at_exit(torch, metric_path)
    kwargs = {}
    if "optimizer" not in ds:  # e.g. adam-8bit: DeepSpeed cannot build it from the config
        import bitsandbytes as bnb
        kwargs["optimizer"] = bnb.optim.Adam8bit(model.parameters(), lr=1e-4)
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                           config=ds, **kwargs)
    mbs, gas = ds["train_micro_batch_size_per_gpu"], ds["gradient_accumulation_steps"]
    steps = args.train_iters
    if ds.get("autotuning", {}).get("enabled"):
        steps = ds["autotuning"].get("end_profile_step", 5) + 2  # the engine exits before
    gen = torch.Generator(device=engine.device).manual_seed(args.seed + rank)
    for step in range(1, steps + 1):
        for _ in range(gas):
            tokens = torch.randint(args.vocab_size, (mbs, args.seq_length + 1), device=engine.device,
                                   generator=gen)
            loss = engine(tokens)
            engine.backward(loss)
            engine.step()
        if rank == 0:
            print("step %d loss %.4f" % (step, loss.item()), flush=True)


def config_dtype(torch, ds):
    """The config's 16-bit training dtype, or None for fp32."""
    if ds.get("bf16", {}).get("enabled"):
        return torch.bfloat16
    return torch.float16 if ds.get("fp16", {}).get("enabled") else None


def wrap_plain(torch, args, ds, model, world, local):
    """The PyTorch stand-ins for DeepSpeed's ZeRO stages; returns (model, optimizer)."""
    zero = ds.get("zero_optimization", {})
    stage = zero.get("stage", 0)
    opt_cfg = ds.get("optimizer", {"type": "AdamW", "params": {"lr": 1e-4}})
    name, params = opt_cfg.get("type", "AdamW"), dict(opt_cfg.get("params", {}))
    opt_cls = {"adam": torch.optim.AdamW, "adamw": torch.optim.AdamW}.get(name.lower())
    if opt_cls is None:
        opt_cls = getattr(torch.optim, name)
    if "betas" in params:
        params["betas"] = tuple(params["betas"])
    if zero.get("offload_optimizer") and stage < 3:
        print("train_gpt.py: optimizer offload has no plain-PyTorch equivalent here; ignored",
              file=sys.stderr)
    dtype = config_dtype(torch, ds)
    if args.pure_16bit and dtype is not None:  # the model itself in 16 bits: no mixed-precision policy
        model, dtype = model.to(dtype), None
    if stage == 3 or (args.fsdp_plan and stage == 2):
        from fsdp_wrap import wrap_fsdp
        model = wrap_fsdp(torch, args, model, stage, dtype, local,
                          bool(zero.get("offload_param")))
        return model, opt_cls(model.parameters(), **params)
    model = model.cuda(local)
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    if stage >= 1 and world > 1:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        return model, ZeroRedundancyOptimizer(model.parameters(), optimizer_class=opt_cls, **params)
    return model, opt_cls(model.parameters(), **params)


def train_plain(torch, args, ds, model, metric_path, n_params):
    rank, world, local = init_distributed(torch)
    model, opt = wrap_plain(torch, args, ds, model, world, local)
    mbs, gas = ds["train_micro_batch_size_per_gpu"], ds["gradient_accumulation_steps"]
    dtype = None if args.pure_16bit else config_dtype(torch, ds)  # autocast's dtype
    from fsdp_wrap import grad_scaler, is_fsdp
    fsdp = is_fsdp(model)
    scaler = grad_scaler(torch, model, dtype is torch.float16)
    clip = ds.get("gradient_clipping", 0)
    at = ds.get("autotuning", {})
    profiling = bool(at.get("enabled"))
    meter = Metrics(torch, ds, metric_path, at.get("start_profile_step", 3), at.get("end_profile_step", 5))
    steps = meter.end if profiling else args.train_iters
    gen = torch.Generator(device="cuda").manual_seed(args.seed + rank)
    for step in range(1, steps + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for micro in range(gas):
            tokens = torch.randint(args.vocab_size, (mbs, args.seq_length + 1), device="cuda", generator=gen)
            # DDP reduces once per step; FSDP reduce-scatters every micro-batch, as priced.
            sync = micro == gas - 1 or fsdp or not hasattr(model, "no_sync")
            ctx = model.no_sync() if not sync else torch.enable_grad()
            with ctx, torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
                loss = model(tokens) / gas
            scaler.scale(loss).backward()
        if clip:
            scaler.unscale_(opt)
            if hasattr(model, "clip_grad_norm_"):  # FSDP1: the norm over all shards
                model.clip_grad_norm_(clip)
            else:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        meter.step_done(step, time.perf_counter() - t0)
        if rank == 0:
            print("step %d loss %.4f %.1f ms" % (step, loss.item() * gas, (time.perf_counter() - t0) * 1e3),
                  flush=True)
    if profiling and rank == 0:
        meter.write(args, n_params, world)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


def main():
    args = parse_args()
    if args.hf_config:
        apply_hf_config(args)
    if args.tensor_model_parallel_size > 1 or args.pipeline_model_parallel_size > 1:
        sys.exit("train_gpt.py implements data parallelism only (tensor/pipeline parallel size 1); "
                 "run TP/PP configurations with Megatron-DeepSpeed")
    if args.recompute_modules:
        sys.exit("train_gpt.py recomputes whole layers or the attention core only, not Megatron-Core's "
                 "--recompute-modules %s; run such plans with Megatron-LM" % " ".join(args.recompute_modules))
    if args.expert_model_parallel_size > 1 or args.expert_tensor_parallel_size > 1:
        sys.exit("train_gpt.py runs every expert on each GPU (expert model/tensor parallel size 1); "
                 "run expert-parallel configurations with Megatron-LM")
    path = ds_config_path(args)
    if path is None:
        sys.exit("train_gpt.py: give --deepspeed CONFIG or --deepspeed_config CONFIG")
    with open(path) as f:
        ds = json.load(f)
    if args.micro_batch_size and "train_micro_batch_size_per_gpu" not in ds:
        ds["train_micro_batch_size_per_gpu"] = args.micro_batch_size
    ds.setdefault("gradient_accumulation_steps", 1)
    metric_path = ds.get("autotuning", {}).get("metric_path") or "autotuning_metric.json"

    import torch
    torch.manual_seed(args.seed)
    if args.tf32:  # PyTorch's default since 1.12 is IEEE fp32 matmuls
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    model = build_model(args, torch)
    n_params = sum(p.numel() for p in model.parameters())
    if args.num_experts:  # FLOPs count the parameters a token meets: top-k of the experts
        from moe_mlp import expert_parameter_count
        n_params -= expert_parameter_count(model) * (1 - args.moe_router_topk / args.num_experts)
    deepspeed = None
    if not args.no_deepspeed:
        try:
            import deepspeed
        except ImportError as e:
            # Said out loud: PyTorch's equivalents run a different step (autocast instead of
            # DeepSpeed's 16-bit model), so a DeepSpeed prediction does not describe this run.
            print(f"train_gpt.py: DeepSpeed is not importable ({e}); training with PyTorch's "
                  "equivalents instead (pass --no-deepspeed to choose them)", file=sys.stderr)
            deepspeed = None
    if args.deepspeed_activation_checkpointing and deepspeed is None:
        sys.exit("train_gpt.py: --deepspeed-activation-checkpointing runs DeepSpeed's checkpointing, "
                 "which needs DeepSpeed; leave the flag out to recompute with torch.utils.checkpoint")
    if deepspeed is not None:
        train_deepspeed(deepspeed, torch, args, ds, model, metric_path)
    else:
        train_plain(torch, args, ds, model, metric_path, n_params)


if __name__ == "__main__":
    main()
