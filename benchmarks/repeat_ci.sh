#!/usr/bin/env bash
# Is the suite free of flaky tests? Runs CI's own script (.ci/run: install, then `make test-all`)
# N times in a row, each on a new clone of HEAD, and stops at the first failure. The real data and
# the reference outputs are passed on through ELMO_DATA_DIR and ELMO_FIXTURES_DIR when set, as CI
# has them. Appends a line a run to benchmarks/results/<machine>/ci_repeat.txt: the commit, date,
# exit status, wall time, pytest's summary line and any failed test.
#   bash benchmarks/repeat_ci.sh [N]        (N defaults to 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
source benchmarks/machine.sh
results=$PWD/benchmarks/results/$(machine)
mkdir -p "$results"
out=$results/ci_repeat.txt
if [[ ! -s $out ]]; then
  echo "# .ci/run on a fresh clone, several times in a row (bash benchmarks/repeat_ci.sh N)" > "$out"
  echo "# CPU: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores" >> "$out"
fi
commit=$(git rev-parse --short HEAD)
for ((i = 1; i <= runs; i++)); do
  work=$(mktemp -d)
  git clone -q . "$work/clone"
  start=$SECONDS
  status=0
  (cd "$work/clone" && .ci/run) > "$work/ci.log" 2>&1 || status=$?
  summary=$(grep -E "(passed|failed|error)" "$work/ci.log" | tail -1 || true)
  failed=$(grep -E "^(FAILED|ERROR) " "$work/ci.log" | tr '\n' ' ' || true)
  line="run $i/$runs: commit $commit, $(date -u '+%F %H:%M'), exit $status, $((SECONDS - start)) s: $summary${failed:+ | $failed}"
  echo "$line" | tee -a "$out"
  if ((status != 0)); then
    cp "$work/ci.log" "$results/ci_repeat_failed.log"
    rm -rf "$work"
    exit "$status"
  fi
  rm -rf "$work"
done
