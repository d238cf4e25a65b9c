"""PyTorch FSDP for dsplan's reference workload (train_gpt.py): the plans dsplan prices as FSDP.

FSDP1 (--fsdp-version 1, FullyShardedDataParallel): one wrapped unit per transformer block,
ZeRO 3 -> FULL_SHARD (HYBRID_SHARD with --fsdp-sharding hybrid), ZeRO 2 -> SHARD_GRAD_OP
(_HYBRID_SHARD_ZERO2), MixedPrecision in the config's 16-bit dtype.
FSDP2 (--fsdp-version 2, fully_shard, PyTorch >= 2.4): fully_shard on every block and then on the
model, ZeRO 3 resharding after forward and ZeRO 2 not (reshard_after_forward), a 1-D mesh over all
ranks or a 2-D (replicate, shard) mesh with one node per shard group for hybrid,
MixedPrecisionPolicy in the config's 16-bit dtype.
Both reduce gradients in that dtype or in fp32 (--fsdp-reduce-dtype), and both reduce-scatter on
every micro-batch, which is what dsplan prices (parallel_comm.cc): the training loop never skips
FSDP's gradient synchronisation during accumulation.
"""
import os


def _fsdp1(torch, args, model, stage, dtype, local, offload_params):
    from torch.distributed.fsdp import (CPUOffload, FullyShardedDataParallel as FSDP, MixedPrecision,
                                        ShardingStrategy)
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    hybrid = args.fsdp_sharding == "hybrid"
    strategy = {3: "HYBRID_SHARD" if hybrid else "FULL_SHARD",
                2: "_HYBRID_SHARD_ZERO2" if hybrid else "SHARD_GRAD_OP"}[stage]
    mixed = None
    if args.fsdp_plan and dtype is not None:
        reduce = torch.float32 if args.fsdp_reduce_dtype == "fp32" else dtype
        mixed = MixedPrecision(param_dtype=dtype, reduce_dtype=reduce, buffer_dtype=dtype)
    return FSDP(model, sharding_strategy=getattr(ShardingStrategy, strategy), mixed_precision=mixed,
                auto_wrap_policy=ModuleWrapPolicy({type(model.blocks[0])}), device_id=local,
                cpu_offload=CPUOffload(offload_params=offload_params))


def _fsdp2(torch, args, model, stage, dtype, offload_params):
    try:
        from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard
    except ImportError:  # PyTorch 2.4-2.5
        from torch.distributed._composable.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard
    from torch.distributed.device_mesh import init_device_mesh
    world = torch.distributed.get_world_size()
    if args.fsdp_sharding == "hybrid":
        per_node = int(os.environ.get("LOCAL_WORLD_SIZE", torch.cuda.device_count()))
        if world % per_node:
            raise SystemExit("fsdp_wrap.py: hybrid sharding needs whole nodes (%d ranks, %d per node)"
                             % (world, per_node))
        mesh = init_device_mesh("cuda", (world // per_node, per_node), mesh_dim_names=("replicate", "shard"))
    else:
        mesh = init_device_mesh("cuda", (world,))
    kw = {"mesh": mesh, "reshard_after_forward": stage == 3}
    if dtype is not None:
        reduce = torch.float32 if args.fsdp_reduce_dtype == "fp32" else dtype
        kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=reduce)
    if offload_params:
        kw["offload_policy"] = CPUOffloadPolicy()
    for block in model.blocks:
        fully_shard(block, **kw)
    fully_shard(model, **kw)
    return model


def wrap_fsdp(torch, args, model, stage, dtype, local, offload_params):
    """Wraps `model` in the FSDP version the plan names; returns the wrapped model."""
    if getattr(args, "fsdp_version", 1) == 2:
        return _fsdp2(torch, args, model, stage, dtype, offload_params)
    return _fsdp1(torch, args, model, stage, dtype, local, offload_params)


def is_fsdp(model):
    """True for a model wrapped by either FSDP version."""
    return hasattr(model, "clip_grad_norm_") or hasattr(model, "reshard")


def grad_scaler(torch, model, fp16):
    """fp16 loss scaling; FSDP's scaler agrees across ranks on an overflow in any shard."""
    if is_fsdp(model):
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
        return ShardedGradScaler(enabled=fp16)
    return torch.amp.GradScaler("cuda", enabled=fp16)
