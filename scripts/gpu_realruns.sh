#!/usr/bin/env bash
# The real runs behind docs/accuracy.md "Real runs on one H100" (session 9), on one lent GPU:
# cuBLAS GEMM records for model-shaped GEMMs and the PyTorch cross-check (gemm), kernel
# breakdowns of the reference workload (profile), and `dsplan confirm` passes: the
# development models of the session-9 fixes (confirm), the held-out models (heldout), the
# held-out paths, standard attention and fp16 (paths), and DeepSpeed plans (deepspeed);
# FP8 against bf16 GEMM rates over K (fp8) and misaligned per-head attention GEMMs (align).
# Session 34: the 2024-25 families (Qwen2.5, Qwen3, Gemma 3) and StarCoder2 through
# `confirm`, with this machine's host and GEMM records and kernel profiles (families);
# plans whose memory peaks in the optimizer step (stepmem). Session 42: the reference workload's
# mixture-of-experts path on a tiny model, then MoE layers split by kernel class beside dense
# twins of the same FLOPs (moe); the expert GEMMs alone, grouped, batched and dense (grouped);
# rows added with atomics as Megatron's unfused permutation adds them (atomic); dense GEMMs that
# fill less than a wave of SMs, over K (wavefill).
# Both PyTorch only: no dsplan binary needed.
# Uses the binaries staged by scripts/gpu_stage.sh (carry .gpu). `deepspeed` also needs
# .whl/ (carry it) with DeepSpeed's sdist and the wheels of hjson, pydantic, pydantic-core,
# annotated-types, typing-inspection and typing-extensions (`pip download`, docs/confirm.md).
# Every step's output and exit status is kept in OUTDIR; a failing step does not stop the
# rest.
# Usage: scripts/gpu_realruns.sh OUTDIR [PART...]
#   PART: gemm profile kernels window fp8 align confirm heldout paths deepspeed families stepmem moe grouped atomic wavefill
#         (default: gemm profile confirm)
set -uo pipefail
out=${1:?usage: gpu_realruns.sh OUTDIR [gemm] [profile] [kernels] [window] [fp8] [align] [confirm] [heldout] [paths] [deepspeed] [families] [stepmem] [moe] [grouped] [atomic] [wavefill]}
shift
parts=" ${*:-gemm profile confirm} "
mkdir -p "$out"
source scripts/gpu_checks.sh env "$out"   # sets $bin, LD_LIBRARY_PATH and step()
hw=h100-80gb
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)" in
  *H200*) hw=h200-141gb ;;
esac
if [[ $parts == *" gemm "* ]]; then
  for m in gpt-1.3b llama2-7b gpt-13b; do
    step "gemm_$m" timeout 120 "$bin" calibrate --quick --model "$m" --out "$out/profile-$m.json"
  done
  step torch_gemm python3 scripts/torch_gemm_check.py "$out/profile-gpt-1.3b.json.records.json"
fi
if [[ $parts == *" profile "* ]]; then
  # The shapes as `dsplan confirm` passes them: GPT-2 unpadded with gelu_new, GPT-1.3B
  # Megatron-style (vocabulary padded to 128); both with dropout 0.1.
  step prof_gpt2_mbs16 timeout 120 python3 scripts/torch_step_profile.py "$out/prof_gpt2_mbs16.json" -- \
       --use-flash-attn --unfused-gelu --make-vocab-size-divisible-by 1 --mbs 16
  step prof_gpt13b_mbs4 timeout 150 python3 scripts/torch_step_profile.py "$out/prof_gpt13b_mbs4.json" -- \
       --num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 --use-flash-attn --mbs 4
fi
if [[ $parts == *" kernels "* ]]; then
  # Session 27: the block's kernels still priced at the blended HBM rate, PyTorch's
  # elementwise table again on the same machine, and kernel profiles of a standard-attention
  # run (GPT-2, micro-batch 16) beside its flash twin and of Llama 3.2 1B (RMSNorm, rotary,
  # SwiGLU), the shapes of the held-out real runs.
  nvidia-smi -q -d CLOCK,POWER >"$out/clocks_before.txt" 2>&1
  step block_kernel_rates timeout 120 python3 scripts/block_kernel_rates.py
  step elementwise_rates timeout 60 python3 scripts/elementwise_rates.py
  gpt2="--unfused-gelu --make-vocab-size-divisible-by 1 --mbs 16"
  step prof_gpt2_noflash timeout 90 python3 scripts/torch_step_profile.py "$out/prof_gpt2_noflash.json" -- $gpt2
  step prof_gpt2_flash timeout 90 python3 scripts/torch_step_profile.py "$out/prof_gpt2_flash.json" -- \
       --use-flash-attn $gpt2
  step prof_llama1b_mbs4 timeout 120 python3 scripts/torch_step_profile.py "$out/prof_llama1b_mbs4.json" -- \
       --num-layers 16 --hidden-size 2048 --num-attention-heads 32 --seq-length 2048 \
       --ffn-hidden-size 8192 --vocab-size 128256 --make-vocab-size-divisible-by 1 --hidden-dropout 0 \
       --attention-dropout 0 --group-query-attention --num-query-groups 8 --swiglu --normalization RMSNorm \
       --position-embedding-type rope --disable-bias-linear --separate-qkv --separate-gate-up \
       --use-flash-attn --mbs 4
  nvidia-smi -q -d CLOCK,POWER >"$out/clocks_after.txt" 2>&1
fi
# Session 27: FlexAttention with and without a sliding window and a score cap.
[[ $parts == *" window "* ]] && step window_attention timeout 180 python3 scripts/window_attention.py
[[ $parts == *" fp8 "* ]] && step fp8_gemm_k timeout 90 python3 scripts/fp8_gemm_k.py
[[ $parts == *" align "* ]] && step attention_align timeout 60 python3 scripts/attention_align.py
if [[ $parts == *" moe "* ]]; then
  # The workload's MoE path under autocast (grouped GEMMs, then the per-expert loop with a dense
  # layer first), three steps each; then the layer profile in bf16.
  echo '{"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1, "bf16": {"enabled": true}}' \
       >"$out/moe_smoke_ds.json"
  tiny="--num-layers 2 --hidden-size 256 --num-attention-heads 4 --num-experts 8 --moe-router-topk 2
        --moe-ffn-hidden-size 512 --swiglu --seq-length 256 --train-iters 3 --no-deepspeed
        --deepspeed_config $out/moe_smoke_ds.json"
  step moe_smoke_grouped timeout 120 python3 examples/train_gpt.py $tiny --moe-grouped-gemm
  step moe_smoke_fused timeout 120 python3 examples/train_gpt.py $tiny --moe-grouped-gemm --moe-permute-fusion
  step moe_smoke_loop timeout 120 python3 examples/train_gpt.py $tiny --moe-layer-freq "[0,1]"
  step moe_layers timeout 420 env PYTHONUNBUFFERED=1 python3 scripts/moe_layer_profile.py "$out/moe_layers.json"
fi
[[ $parts == *" wavefill "* ]] && step wave_fill_gemms timeout 120 python3 scripts/wave_fill_gemms.py "$out/wave_fill_gemms.json"
[[ $parts == *" atomic "* ]] && step atomic_rows timeout 120 python3 scripts/atomic_rows.py "$out/atomic_rows.json"
[[ $parts == *" grouped "* ]] && step grouped_gemm_rates timeout 300 env PYTHONUNBUFFERED=1 \
                                      python3 scripts/grouped_gemm_rates.py "$out/grouped_gemm_rates.json"
confirm_passes() {  # one `dsplan confirm --top 3` of DDP plans per "NAME MODEL CKPT [FLAGS...]"
  for spec in "$@"; do
    set -- $spec
    local name=$1 model=$2 ckpt=$3; shift 3
    step "confirm_$name" "$bin" confirm --top 3 --model "$model" --gpus 1 --hw "$hw" \
         --framework ddp --zero 0 --ckpt "$ckpt" "$@" --timeout 100 \
         --results-dir "$out/confirm-$name" --exps-dir "$out/exps-$name"
  done
}
[[ $parts == *" confirm "* ]] && confirm_passes "gpt2 gpt2 none" "gpt2-medium gpt2-medium none,full" \
                                                "gpt-1.3b gpt-1.3b none,full"
[[ $parts == *" heldout "* ]] && confirm_passes "llama3.2-1b llama3.2-1b none,full --seq 2048" \
                                                "gpt2-xl gpt2-xl none,full" \
                                                "gpt2-large gpt2-large none,full"
[[ $parts == *" paths "* ]] && confirm_passes "gpt2-noflash gpt2 none,selective,full,block --flash off" \
                                              "gpt2-medium-fp16 gpt2-medium none,full --precision fp16"
if [[ $parts == *" families "* ]]; then
  # Session 34: the 2024-25 families again (session 27 ran them before the workload built one
  # rotary table a forward and before --norm-kernel torch), with the smaller micro-batches
  # that are host-bound; a held-out StarCoder2 (LayerNorm with biases, GQA, rope, plain
  # GELU MLP); the host and GEMM records of this machine; kernel profiles of the two most
  # host-bound cases, with the flags confirm passed.
  hf=tests/data/models/hf
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 500 \
    >"$out/clocks.csv" 2>&1 &
  smi=$!
  step calibrate_qwen25 timeout 90 "$bin" calibrate --quick --model "$hf/Qwen2.5-0.5B/config.json" \
       --seq 2048 --out "$out/calibrate_quick_qwen25.json"
  common="--seq 2048 --norm-kernel torch"
  confirm_passes "qwen25 $hf/Qwen2.5-0.5B/config.json none $common --mbs 2,4,8 --flash on" \
                 "qwen3 $hf/Qwen3-0.6B/config.json none $common --mbs 2,4,8 --flash on" \
                 "gemma3 $hf/gemma-3-1b-pt/config.json none $common --mbs 2,4 --flash off"
  profile_from() {  # profile_from NAME EXPERIMENT_DIR MBS: torch_step_profile of a confirm run's flags
    local cmd=$2/cmd.txt
    [[ -f $cmd ]] || { echo "   no $cmd" | tee -a "$out/status.txt"; return; }
    local flags
    flags=$(sed -E 's/^[^ ]*python[^ ]* [^ ]*train_gpt\.py //; s/--deepspeed_config [^ ]+//;
                    s/--no-deepspeed//; s/--(micro|global)-batch-size [0-9]+//g' "$cmd")
    step "prof_$1" timeout 120 python3 scripts/torch_step_profile.py "$out/prof_$1.json" -- $flags --mbs "$3"
  }
  profile_from qwen25_mbs2 "$out/confirm-qwen25/z0_tp1_pp1_gas1_tmbspg2_flash_ddp" 2
  profile_from gemma3_mbs2 "$out/confirm-gemma3/z0_tp1_pp1_gas1_tmbspg2_ddp" 2
  confirm_passes "starcoder2 starcoder2-3b none $common --mbs 1,2,4 --flash on"
  profile_from qwen3_mbs4 "$out/confirm-qwen3/z0_tp1_pp1_gas1_tmbspg4_flash_ddp" 4
  kill "$smi" 2>/dev/null
fi
if [[ $parts == *" stepmem "* ]]; then
  # Session 34: plans whose memory peaks in the optimizer step (full recomputation, so the
  # activations are small): torch's foreach AdamW holds an fp32 sqrt(exp_avg_sq) list there
  # (20 B/param on one rank). Llama 2 7B at 125.5 GiB predicted, and Mistral 7B, whose
  # 134.9 GiB fits the H200 only without the 10% fragmentation allowance (--fragmentation 0).
  common="--seq 2048 --flash on --norm-kernel torch"
  confirm_passes "llama2-7b-ckfull llama2-7b full $common --mbs 1,2" \
                 "starcoder2-3b-ckfull starcoder2-3b full $common --mbs 1,4" \
                 "mistral-7b-ckfull mistral-7b full $common --mbs 1 --fragmentation 0"
fi
if [[ $parts == *" deepspeed "* ]]; then
  # DeepSpeed's op builder cannot parse the image's TORCH_CUDA_ARCH_LIST "9.0a".
  export DS_BUILD_OPS=0 TORCH_CUDA_ARCH_LIST=9.0
  step install_deepspeed bash -c 'python3 -m pip install -q --no-index --no-deps --no-compile \
       --target /tmp/site .whl/*.whl && PYTHONPATH=/tmp/site python3 -m pip install -q --no-index \
       --no-deps --no-build-isolation --target /tmp/site .whl/deepspeed-*.tar.gz'
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  step confirm_deepspeed "$bin" confirm --top 3 --model gpt2-medium --gpus 1 --hw "$hw" \
       --zero 0,1 --ckpt none --timeout 240 --results-dir "$out/confirm-ds" --exps-dir "$out/exps-ds"
fi
exit 0
