#!/usr/bin/env bash
# Runs the benchmark scripts and writes their output to benchmarks/results/<script>.txt, each
# headed by the command, the commit and the date. Run on an otherwise idle machine.
#   bash benchmarks/run_all.sh [script ...]      (default: all; e.g. bench_pretrain)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
declare -A ARGS=(
  [bench_pretrain]="--sizes gutenberg small --steps 3"
  [bench_bilm]="--size original --skip-ner --repeats 1 --batch 16"
  [bench_precision]="--ner-epochs 0"
  [bench_ner]="--epochs 3"
)
for name in "${@:-bench_pretrain bench_bilm bench_precision bench_ner}"; do
  for script in $name; do
    out=benchmarks/results/$script.txt
    {
      echo "# $PY benchmarks/$script.py ${ARGS[$script]}"
      echo "# commit $(git rev-parse HEAD)$(git diff --quiet || echo -dirty), $(date -u +%F)"
      $PY benchmarks/$script.py ${ARGS[$script]} 2>&1 | grep -v "^INFO\|^epoch\|^training\|^corpus"
    } > "$out.tmp"
    mv "$out.tmp" "$out"
    cat "$out"
  done
done
