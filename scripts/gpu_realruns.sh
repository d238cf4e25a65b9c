#!/usr/bin/env bash
# Real runs on one lent GPU for docs/accuracy.md "Real runs" (the measurements behind it):
# cuBLAS GEMM records for model-shaped GEMMs, the PyTorch cross-check, kernel breakdowns of
# the reference workload and `dsplan confirm` of DDP plans (the workload's plain PyTorch
# path; the lent machine has no DeepSpeed). Uses the binaries staged by scripts/gpu_stage.sh
# (carry .gpu). Usage: scripts/gpu_realruns.sh OUTDIR. Every step's output and exit status
# is kept in OUTDIR; a failing step does not stop the rest.
# Usage: scripts/gpu_realruns.sh OUTDIR [PART...]   PART: gemm profile confirm heldout
# (default: gemm profile confirm)
set -uo pipefail
out=${1:?usage: gpu_realruns.sh OUTDIR [gemm] [profile] [confirm|heldout]}
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
# confirm: the models the session-9 fixes were developed on; heldout: models they were not.
if [[ $parts == *" confirm "* ]]; then
  specs=("gpt2 none" "gpt2-medium none,full" "gpt-1.3b none,full")
elif [[ $parts == *" heldout "* ]]; then
  specs=("gpt2-large none,full" "gpt2-xl none,full" "llama3.2-1b none,full --seq 2048")
else
  exit 0
fi
for spec in "${specs[@]}"; do
  set -- $spec
  model=$1 ckpt=$2; shift 2
  step "confirm_$model" "$bin" confirm --top 3 --model "$model" --gpus 1 --hw "$hw" --framework ddp \
       --zero 0 --ckpt "$ckpt" "$@" --timeout 100 --results-dir "$out/confirm-$model" \
       --exps-dir "$out/exps-$model"
done
