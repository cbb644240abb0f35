#!/usr/bin/env bash
# Runs the benchmark scripts and writes their output to benchmarks/results/<name>.txt, each
# headed by the command, the commit and the date. Run on an otherwise idle machine.
#   bash benchmarks/run_all.sh [name ...]      (default: all names below)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
declare -A RUNS=(  # name -> script and arguments
  [bench_pretrain]="bench_pretrain.py --sizes gutenberg small --steps 3"
  [bench_pretrain_untuned]="bench_pretrain.py --sizes gutenberg --steps 3 --no-cpu-tuning"
  [bench_bilm]="bench_bilm.py --size original --skip-ner --repeats 3"
  [bench_precision]="bench_precision.py --ner-epochs 0"
  [bench_precision_ner]="bench_precision.py --weights gutenberg --epochs 1 --ner-epochs 10 --threads 1"
  [bench_ner]="bench_ner.py --epochs 3"
)
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(bench_pretrain bench_pretrain_untuned bench_bilm bench_precision bench_ner)
for name in "${names[@]}"; do
  read -r script args <<< "${RUNS[$name]}"
  out=benchmarks/results/$name.txt
  {
    echo "# $PY benchmarks/$script $args"
    echo "# commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- elmo_experiments benchmarks || echo -dirty), $(date -u +%F)"
    # shellcheck disable=SC2086
    $PY "benchmarks/$script" $args 2>&1 | grep -v "^INFO\|^epoch\|^training\|^corpus\|^test: \|^archive: \|^!!"
  } > "$out.tmp"
  mv "$out.tmp" "$out"
  cat "$out"
done
