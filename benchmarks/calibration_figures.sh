#!/usr/bin/env bash
# benchmarks/calibration_figures.sh [DNNTUNE] [DIR] — the figures of `dnntune calibrate` on this
# machine:
#   1. wall time of a default calibration (both backends, batch 16, the default 120 s budget) of
#      resnet50 + resnet152 + inception_v3, and what the budget kept of the grid;
#   2. wall time of the calibration the model is validated with: resnet18 + resnet50 +
#      inception_v3 on torch at batch 8 and 16 (same budget);
#   3. from the first one's report: the achieved share of the measured FMA peak of the largest
#      convolutions on each backend, and the sum of layer passes against a whole-network
#      training step per network and backend (the whole-network runs the budget left out are
#      added first, with --resume).
# Calibrations go to DIR/default and DIR/model (default: a new temporary directory). Other work
# on the machine skews the figures (and the co-running contention most): run it on an idle node.
set -euo pipefail
dnntune=${1:-"$(dirname "$0")/../build/cli/dnntune"}
directory=${2:-$(mktemp -d /tmp/dnntune-calibration-figures-XXXXXX)}
mkdir -p "$directory"

# Runs a calibration into $1 (the rest are its options) and prints its wall time.
calibrate() {
  local into=$1
  shift
  local start end
  start=$(date +%s.%N)
  "$dnntune" calibrate "$@" -o "$into" > "$into.plan-and-summary.txt" 2> "$into.progress.txt"
  end=$(date +%s.%N)
  grep -E "grid:|to measure:|Measured in" "$into.plan-and-summary.txt" | sed 's/^ */    /'
  printf '    wall time %.0f s\n' "$(echo "$end - $start" | bc)"
}

echo "1. Default calibration of resnet50 + resnet152 + inception_v3 (both backends, batch 16)"
calibrate "$directory/default" --model resnet50 --model resnet152 --model inception_v3
echo "2. The model's validation set: resnet18 + resnet50 + inception_v3, torch, batch 8 and 16"
calibrate "$directory/model" --model resnet18 --model resnet50 --model inception_v3 --backend torch \
  --batch 8 --batch 16

# The budget may have left whole-network runs out: add them (base setting) for the additivity.
"$dnntune" calibrate --model resnet50 --model resnet152 --model inception_v3 --pass forward_backward \
  --budget 600 --resume -o "$directory/default" > /dev/null 2>&1
"$dnntune" calibrate --report "$directory/default" > "$directory/default.report.txt"
echo "3. Largest convolutions at the base setting (share of the measured FMA peak)"
sed -n '/^Largest convolutions/,/^$/p' "$directory/default.report.txt" | tail -n +2
echo "   Sum of layer passes against a whole-network training step"
sed -n '/^Additivity/,$p' "$directory/default.report.txt" | tail -n +2
echo "Records and reports: $directory"
