#!/usr/bin/env bash
# Runs the benchmark scripts and writes their output to benchmarks/results/<machine>/<name>.txt,
# each headed by the command, the commit, the date and the CPU. <machine> is the CPU's vendor and
# its best bf16 matrix unit (intel-amx, amd-avx512bf16, ...): figures of different machine kinds
# sit side by side. Run on an otherwise idle machine.
#   bash benchmarks/run_all.sh [name ...]      (default: all names below)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
declare -A RUNS=(  # name -> script and arguments
  [bench_pretrain]="bench_pretrain.py --sizes gutenberg small --steps 5"
  [bench_pretrain_untuned]="bench_pretrain.py --sizes gutenberg --steps 5 --no-cpu-tuning"
  [bench_bilm]="bench_bilm.py --size original --skip-ner --repeats 3"
  [bench_precision]="bench_precision.py --ner-epochs 0"
  [bench_precision_ner]="bench_precision.py --weights gutenberg --epochs 1 --ner-epochs 10 --threads 1"
  [bench_ner]="bench_ner.py --epochs 3"
  [bench_tasks]="bench_tasks.py --sizes cpu --steps 6"
  [bench_tasks_paper]="bench_tasks.py --sizes paper --steps 4"
  [compare_tasks]="compare_tasks.py --before 3298c92 --rounds 3"
  [bench_ops]="bench_ops.py --rounds 5"
  [bench_allennlp]="bench_allennlp.py --steps 6"  # with PYTHON=.venv-allennlp/bin/python (benchmarks/allennlp_env.sh)
  [bench_embed]="bench_embed.py --weights gutenberg --sentences 10000 100000 --threads 1 --interrupt 0.5"
)
source benchmarks/machine.sh
results=benchmarks/results/$(machine)
mkdir -p "$results"
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(bench_pretrain bench_pretrain_untuned bench_bilm bench_precision bench_ner)
for name in "${names[@]}"; do
  read -r script args <<< "${RUNS[$name]}"
  out=$results/$name.txt
  {
    echo "# $PY benchmarks/$script $args"
    echo "# commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- elmo_experiments benchmarks || echo -dirty), $(date -u +%F)"
    echo "# CPU: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores"
    # shellcheck disable=SC2086
    $PY "benchmarks/$script" $args 2>&1 | grep -v "^USDT:\|^INFO\|^epoch\|^training\|^corpus\|^test: \|^archive: \|^!!"
  } > "$out.tmp"
  mv "$out.tmp" "$out"
  cat "$out"
done
