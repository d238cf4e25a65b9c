#!/usr/bin/env bash
# The checks that need a GPU, in one script, for a session that has the lent GPU machine
# (docs/calibration.md "First real run", docs/confirm.md "First real runs"; the real-run
# passes themselves are scripts/gpu_realruns.sh). Run from the repository root:
#   scripts/gpu_checks.sh PHASE [OUTDIR]      PHASE: build | calibrate | confirm | prebuilt | all
# OUTDIR defaults to $OUT (the device tool's output folder) or ./gpu-out. Every command's
# output and exit status is written there (status.txt), and a failing step does not stop
# the later ones. Each phase fits in the device tool's 10-minute limit on 16 cores:
#   build      configure + build (build-gpu/, Release, CUDA on), ctest -L gpu
#   calibrate  dsplan calibrate --quick; calibrate show; PyTorch bf16 8192^3 cross-check
#              (scripts/torch_gemm_check.py); a large bf16 GEMM run back to back for a
#              minute (scripts/sustained_gemm.py); estimate with and without the profile
#   confirm    dsplan confirm --top 3 for gpt2 on one GPU with the reference workload
#              (needs PyTorch; DeepSpeed optional)
#   prebuilt   for a GPU machine without dsplan's build dependencies: the binaries that
#              scripts/gpu_stage.sh staged in .gpu/ (carry it), the GPU tests run directly,
#              a one-config smoke run of the reference workload, and SDPA's flash and
#              cuDNN kernels timed from 1k to 128k tokens (scripts/flash_by_length.py)
# With .gpu/dsplan present every phase uses it, with .gpu/ and the machine's cuBLAS and
# NCCL (the CUDA toolkit's or PyTorch's wheels) on LD_LIBRARY_PATH.
set -uo pipefail
phase=${1:-all}
out=${2:-${OUT:-gpu-out}}
mkdir -p "$out"
bin=build-gpu/dsplan
if [[ -x .gpu/dsplan ]]; then
  bin=.gpu/dsplan
  libdirs=$PWD/.gpu
  for pattern in 'libcublas.so.13' 'libnccl.so.2'; do
    found=$(find /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets \
                 /opt /usr/lib -name "$pattern" 2>/dev/null | head -n 1)
    [[ -n "$found" ]] && libdirs=$libdirs:$(dirname "$found")
  done
  export LD_LIBRARY_PATH=$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" | tee -a "$out/status.txt"
fi

step() {  # step NAME COMMAND...: run, keep its output, record its exit status
  local name=$1; shift
  echo "== $name: $*" | tee -a "$out/status.txt"
  local t0=$SECONDS
  "$@" >"$out/$name.txt" 2>&1
  local rc=$?
  echo "   exit $rc after $((SECONDS - t0)) s" | tee -a "$out/status.txt"
  tail -n 5 "$out/$name.txt"
  return $rc
}

hw_preset() {  # datasheet preset of GPU 0, from nvidia-smi's name
  local name
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  case "$name" in
    *H200*) echo h200-141gb ;;
    *H100*PCIe*) echo h100-pcie-80gb ;;
    *H100*) echo h100-80gb ;;
    *A100*PCIE*40GB*|*A100*PCIe*40GB*) echo a100-pcie-40gb ;;
    *A100*40GB*) echo a100-40gb ;;
    *A100*) echo a100-80gb ;;
    *V100*) echo v100-32gb ;;
    *) echo "" ;;
  esac
}

do_build() {
  step nvidia_smi nvidia-smi
  step configure cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DDSPLAN_WITH_CUDA=ON
  step build cmake --build build-gpu -j "$(nproc)"
  step ctest_gpu ctest --test-dir build-gpu -L gpu --output-on-failure
}

do_calibrate() {
  local hw; hw=$(hw_preset)
  step calibrate_quick timeout 240 "$bin" calibrate --quick --model gpt2 --out "$out/profile-quick.json"
  step calibrate_show "$bin" calibrate show "$out/profile-quick.json"
  step refit "$bin" calibrate fit --records "$out/profile-quick.json" --out "$out/profile-refit.json"
  step torch_gemm python3 scripts/torch_gemm_check.py "$out/profile-quick.json"
  step sustained_gemm python3 scripts/sustained_gemm.py --seconds 60
  step estimate_datasheet "$bin" estimate --model gpt2-medium --gpus 1 ${hw:+--hw "$hw"} --json
  step estimate_profile "$bin" estimate --model gpt2-medium --gpus 1 ${hw:+--hw "$hw"} \
       --profile "$out/profile-quick.json" --json
}

do_confirm() {
  local hw; hw=$(hw_preset)
  step confirm_gpt2 "$bin" confirm --top 3 --model gpt2 --gpus 1 ${hw:+--hw "$hw"} --zero 0,1 \
       --timeout 120 --results-dir "$out/confirm/results" --exps-dir "$out/confirm/exps"
}

do_prebuilt() {
  step nvidia_smi nvidia-smi
  step torch_version python3 -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))"
  step gemm_gpu_test .gpu/calibrate_gemm_gpu_test
  step nccl_gpu_test .gpu/calibrate_nccl_gpu_test
  local dir=$out/smoke
  mkdir -p "$dir"
  printf '%s\n' '{"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1,' \
    '"bf16": {"enabled": true}, "zero_optimization": {"stage": 0},' \
    '"autotuning": {"enabled": true, "metric_path": "'"$dir"'/metrics.json",' \
    '"start_profile_step": 3, "end_profile_step": 5}}' >"$dir/ds_config.json"
  step workload_smoke timeout 180 python3 examples/train_gpt.py --no-deepspeed --use-flash-attn \
       --deepspeed_config "$dir/ds_config.json"
  cat "$dir/metrics.json" 2>/dev/null
  # session 50's flash rates by sequence length, 1k-128k (about two minutes on an H100)
  step flash_by_length timeout 300 python3 scripts/flash_by_length.py --max-seq 131072
}

case "$phase" in
  env) return 0 2>/dev/null || exit 0 ;;  # sourced by other scripts for $bin and step()
  prebuilt) do_prebuilt ;;
  build) do_build ;;
  calibrate) do_calibrate ;;
  confirm) do_confirm ;;
  all) do_build; do_calibrate; do_confirm ;;
  *) echo "usage: scripts/gpu_checks.sh build|calibrate|confirm|prebuilt|all [OUTDIR]" >&2; exit 2 ;;
esac
echo "outputs in $out (status.txt lists every step and its exit status)"
