#!/usr/bin/env bash
# The project's check for a GPU machine, at most about 8 minutes on one H100:
#   (a) each of the six tasks' full-size ELMo configs (the default ELMO_SIZE) trained for a fixed
#       number of steps in fp32 and bf16, with a biLM of the paper's original shape and random
#       weights in the released layout: steps/s, peak GPU memory, loss finite and falling;
#   (b) the biLM forward benchmark (original shape; fp32, bf16) and original-size and gutenberg-size
#       pretraining steps (fp32, bf16, fp16), each beside the GPU's measured matmul peak;
#   (c) everything into results/gpu/ (or $GPU_CHECK_OUT), headed by the device, commit and date.
#   bash benchmarks/gpu_check.sh              on the GPU machine
#   bash benchmarks/gpu_check.sh --dry-run    the same code paths on the CPU in seconds (tiny biLM,
#                                             CPU-sized configs; the tests run it)
# The data are the embedded samples (cycled), so nothing needs downloading. On a machine that has
# a CUDA PyTorch but not this project's other dependencies, put their wheels in .whl/ and set
# PYTHONPATH to where they are installed (see benchmarks/README.md, "On a GPU").
set -euo pipefail
cd "$(dirname "$0")/.."
dry=false
[[ ${1:-} == --dry-run ]] && dry=true
if [[ -n ${PYTHON:-} ]]; then PY=$PYTHON; elif [[ -x .venv/bin/python ]]; then PY=.venv/bin/python
else PY=python3; fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
if $dry; then  # fp16 products are emulated on CPUs (minutes for one peak measurement)
  device=cpu steps=3 bilm=tiny pretrain=tiny repeats=1 pretrain_steps=1 precisions="fp32 bf16"
  shape="--batch 4 --tokens 5 --peak-size 128" out=${GPU_CHECK_OUT:-$(mktemp -d)}
else
  device=cuda steps=30 bilm=original pretrain="original gutenberg" repeats=3 pretrain_steps=5
  precisions="fp32 bf16 fp16" shape="--batch 64 --tokens 20" out=${GPU_CHECK_OUT:-results/gpu}
fi
mkdir -p "$out"
{
  echo "# bash benchmarks/gpu_check.sh${1:+ $1}"
  echo "# commit $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- elmo_experiments benchmarks 2>/dev/null || echo -dirty), $(date -u +%F)"
  $PY -c 'import torch; print("# device:", torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu", "| torch", torch.__version__)'
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/# /'
} > "$out/header.txt"
cat "$out/header.txt"
# shellcheck disable=SC2086
$PY benchmarks/gpu_check.py --device $device --steps $steps --out "$out/tasks.json" \
  $($dry && echo --dry-run) 2>&1 | grep -v ' INFO ' | tee "$out/tasks.txt"
# shellcheck disable=SC2086
$PY benchmarks/bench_bilm.py --size $bilm --skip-ner --device $device --precisions fp32 bf16 \
  $shape --repeats $repeats 2>&1 | tee "$out/bench_bilm.txt"
# shellcheck disable=SC2086
$PY benchmarks/bench_pretrain.py --sizes $pretrain --device $device --precisions $precisions \
  $shape --steps $pretrain_steps 2>&1 | grep -v '^USDT:' | tee "$out/bench_pretrain.txt"
echo "results in $out"
