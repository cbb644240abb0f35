#!/usr/bin/env bash
# How long the README's two test commands take a newcomer: a fresh clone of HEAD in a temporary
# folder, `make install` (timed apart), then `make test` (or `make test-all` with --all), with
# the data variables unset for `make test` (a newcomer has no data) and kept for `make test-all`
# (CI's). Writes benchmarks/results/<machine>/suite_{test,test_all}.txt: the command, commit,
# date, CPU, cores, both wall times, pytest's summary line and its 40 slowest tests.
# Run on an otherwise idle machine (pause background jobs first).
#   bash benchmarks/time_suite.sh [--all]
set -euo pipefail
cd "$(dirname "$0")/.."
target=test name=suite_test
[[ ${1:-} == --all ]] && target=test-all name=suite_test_all
source benchmarks/machine.sh
results=$PWD/benchmarks/results/$(machine)
mkdir -p "$results"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q . "$work/clone"
cd "$work/clone"
if [[ $target == test ]]; then unset ELMO_DATA_DIR ELMO_FIXTURES_DIR; fi
start=$SECONDS
make install > "$work/install.log" 2>&1
installed=$SECONDS
make "$target" > "$work/test.log" 2>&1 || status=$?
done_at=$SECONDS
{
  echo "# make install && make $target, on a fresh clone (bash benchmarks/time_suite.sh${1:+ $1})"
  echo "# commit $(git rev-parse HEAD), $(date -u +%F)"
  echo "# CPU: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores"
  if [[ -n ${ELMO_DATA_DIR:-} ]]; then echo "# data: ELMO_DATA_DIR set (the real data)"
  else echo "# data: none (the embedded samples)"; fi
  echo "install: $((installed - start)) s"
  echo "make $target: $((done_at - installed)) s, exit status ${status:-0}"
  grep -E "^[0-9]+ (passed|failed)|passed|failed" "$work/test.log" | tail -1
  grep -E "^(FAILED|ERROR) " "$work/test.log" || true
  sed -n '/slowest 40 durations/,/short test summary/p' "$work/test.log" | sed '$d'
} > "$results/$name.txt"
cat "$results/$name.txt"
exit "${status:-0}"
