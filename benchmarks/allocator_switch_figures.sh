#!/usr/bin/env bash
# benchmarks/allocator_switch_figures.sh [--cases LIST] [--repeats N] [--then-iters N] [--dnntune PATH]
# — how glibc-tuned timed in the base anchor's own process (`train --then-allocator glibc-tuned`, what
# a first run does) agrees with glibc-tuned timed in a process of its own (`train --allocator
# glibc-tuned`, what it did before), and what each costs. For each case NETWORK:BATCH at one process on
# every core, alternating, N repeats of:
#   A. the base anchor as a first run trains it, 1 untimed and 3 timed steps, then --then-allocator;
#   B. the same base anchor alone (A's wall time less B's is what the switched run costs);
#   C. glibc-tuned in its own process, 2 untimed steps and --then-iters timed, as a variant's anchor.
# Prints per case the median and range over repeats of glibc-tuned's timed step both ways, their
# ratio, and the wall seconds of the switched run (A - B) against C's. Defaults: resnet18:8,
# resnet50:16,inception_v3:32, 3 repeats, 1 timed step (about 25 minutes on 2 cores). Run it on an idle
# machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dnntune=$here/../build/cli/dnntune
cases=resnet18:8,resnet50:16,inception_v3:32
repeats=3
then_iters=1
while (($#)); do
  case $1 in
    --cases) cases=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --then-iters) then_iters=$2; shift 2 ;;
    --dnntune) dnntune=$2; shift 2 ;;
    *) echo "allocator_switch_figures.sh: unknown argument '$1' (--cases, --repeats, --then-iters, --dnntune)" >&2
       exit 2 ;;
  esac
done
[[ $repeats =~ ^[1-9][0-9]?$ ]] || { echo "allocator_switch_figures.sh: --repeats must be 1..99" >&2; exit 2; }
[[ $then_iters =~ ^[1-9][0-9]?$ ]] || { echo "allocator_switch_figures.sh: --then-iters must be 1..99" >&2; exit 2; }
for case in ${cases//,/ }; do
  [[ $case =~ ^[a-z0-9_]+:[1-9][0-9]*$ ]] || { echo "allocator_switch_figures.sh: a case is NETWORK:BATCH, e.g. resnet50:16" >&2; exit 2; }
done
[[ -x $dnntune ]] || { echo "allocator_switch_figures.sh: no dnntune at $dnntune (build first, or --dnntune PATH)" >&2; exit 2; }
threads=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME ARGS...: one `dnntune train --json` into $work/NAME.json, its wall seconds into $work/NAME.wall.
run() {
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  "$dnntune" train --threads "$threads" --json "$@" >"$work/$name.json" 2>"$work/$name.err" \
    || { echo "allocator_switch_figures.sh: dnntune train $* failed:" >&2; cat "$work/$name.err" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc >"$work/$name.wall"
}

printf '%-18s %-24s %-24s %-20s %-14s %-14s\n' case "switched step (s)" "own-process step (s)" "switched / own" \
  "switched wall" "own wall"
for case in ${cases//,/ }; do
  model=${case%%:*}
  batch=${case##*:}
  echo "allocator_switch_figures.sh: $case, $repeats repeats" >&2
  : >"$work/rows"
  for ((repeat = 1; repeat <= repeats; ++repeat)); do
    run a --model "$model" --batch "$batch" --warmup 1 --iters 3 --then-allocator glibc-tuned --then-iters "$then_iters"
    run b --model "$model" --batch "$batch" --warmup 1 --iters 3
    run c --model "$model" --batch "$batch" --warmup 2 --iters "$then_iters" --allocator glibc-tuned
    python3 - "$work" >>"$work/rows" <<'PY'
import json, sys
w = sys.argv[1]
switched = json.load(open(f"{w}/a.json"))["then"]["report"]["timings"]["iteration"]["median_seconds"]
own = json.load(open(f"{w}/c.json"))["timings"]["iteration"]["median_seconds"]
wall = {n: float(open(f"{w}/{n}.wall").read()) for n in "abc"}
print(switched, own, wall["a"] - wall["b"], wall["c"])
PY
  done
  python3 - "$case" "$work/rows" <<'PY'
import statistics, sys
case, rows = sys.argv[1], [list(map(float, l.split())) for l in open(sys.argv[2])]
def cell(values, digits=2):
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"
switched, own, switched_wall, own_wall = zip(*rows)
ratios = [s / o for s, o in zip(switched, own)]
print(f"{case:<18} {cell(switched):<24} {cell(own):<24} {cell(ratios, 3):<20} {statistics.median(switched_wall):<14.1f} "
      f"{statistics.median(own_wall):<14.1f}")
PY
done
