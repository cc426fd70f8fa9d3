#!/usr/bin/env bash
# benchmarks/gpu_accuracy_figures.sh [DNNTUNE] — the GPU model against the measured H200 and the
# published ResNet-50 figures, from recorded files on any machine (no GPU):
#   1. the fit of the H200's 282 torch-cuda layer passes: per-pass median |error| with the priors,
#      as recorded on the H200 (the model before precisions: its fit.txt), and now;
#   2. images/s predicted [90% band] against measured for every recorded whole-step row: the C++
#      trainer (`dnntune train --device cuda`, two runs: their median) and PyTorch from Python
#      (TF32 default, strict fp32, bf16 + channels_last), with the built-in torch-cuda reference;
#   3. published anchors, predicted (carried over from the H200 by peaks per precision) against
#      published: NVIDIA DeepLearningExamples ResNet-50 v1.5 PyTorch, one GPU (A100-80GB TF32 938
#      and AMP 2470 at b256; V100-16GB FP32 367 at b112, AMP 1200 at b256), MLPerf Training v4.0
#      (fp16, b400 per GPU, 8 GPUs: H100 ~7160, H200 ~7940 images/s per GPU).
# Targets (issue 40): median |error| <= 10%, every row within 20%, >= 80% of rows inside the band.
# The records: $DNNTUNE_SHARED/measured/h200-2026-12-04 (default ../shared beside the source tree).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dnntune=${1:-"$root/build/cli/dnntune"}
shared=${DNNTUNE_SHARED:-"$root/../shared"}
folder="$shared/measured/h200-2026-12-04"
export DNNTUNE_CACHE_DIR=${DNNTUNE_CACHE_DIR:-$(mktemp -d)}
if [[ ! -f "$folder/calibration/layers.jsonl" ]]; then
  echo "no measured H200 records at $folder (set DNNTUNE_SHARED)" >&2
  exit 77
fi

echo "1. per-pass fit of the H200's torch-cuda layer passes"
echo "   recorded on the H200 (the model before precisions): $(grep 'median' "$folder/fit.txt" | sed 's/^ *//')"
"$dnntune" fit "$folder/calibration/layers.jsonl" --backend torch-cuda --machine h200 | grep -E 'median|log-sd|measured in' \
  | sed 's/^ */   now: /'

predict() {  # predict MACHINE NETWORK BATCH PRECISION FORMAT GPUS -> "images/s-per-GPU low high confidence"
  "$dnntune" predict --machine "$1" --model "$2" --batch "$3" --precision "$4" --memory-format "$5" --gpus "$6" --json |
    /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); g=$6
print(d['images_per_second']/g, d['band']['low']/g, d['band']['high']/g, d['confidence'].replace(' ', '-'))"
}

rows() {  # what: machine network batch precision format gpus measured
  cat <<'ROWS'
C++-trainer h200 resnet50 32 tf32 contiguous 1 1416
C++-trainer h200 resnet50 64 tf32 contiguous 1 1760
C++-trainer h200 resnet152 32 tf32 contiguous 1 533
C++-trainer h200 resnet152 64 tf32 contiguous 1 787
PyTorch h200 resnet50 32 tf32 contiguous 1 1455.8
PyTorch h200 resnet50 64 tf32 contiguous 1 1998.1
PyTorch h200 resnet50 128 tf32 contiguous 1 2137.8
PyTorch h200 resnet50 256 tf32 contiguous 1 2216.6
PyTorch h200 resnet50 64 fp32 contiguous 1 939.7
PyTorch h200 resnet50 256 bf16 channels_last 1 4711.7
ROWS
}
anchors() {
  cat <<'ROWS'
DLE-A100-80GB a100 resnet50 256 tf32 contiguous 1 938
DLE-A100-80GB a100 resnet50 256 fp16 channels_last 1 2470
DLE-V100-16GB v100 resnet50 112 fp32 contiguous 1 367
DLE-V100-16GB v100 resnet50 256 fp16 channels_last 1 1200
MLPerf-v4.0 h100 resnet50 400 fp16 channels_last 8 7160
MLPerf-v4.0 h200 resnet50 400 fp16 channels_last 8 7940
ROWS
}

table() {  # table TITLE ROWS-FUNCTION
  echo "$1"
  printf '   %-14s %-6s %-10s %-5s %-20s %-26s %-9s %-7s %s\n' source gpu network batch numerics \
    "predicted [90% band]" measured error confidence
  "$2" | while read -r what machine network batch precision format gpus measured; do
    read -r predicted low high confidence < <(predict "$machine" "$network" "$batch" "$precision" "$format" "$gpus")
    /usr/bin/python3 - "$what" "$machine" "$network" "$batch" "$precision $format" "$predicted" "$low" "$high" \
      "$measured" "$confidence" "$gpus" <<'PY'
import sys
what, machine, network, batch, numerics, p, lo, hi, m, confidence, gpus = sys.argv[1:]
p, lo, hi, m = map(float, (p, lo, hi, m))
numerics = numerics.replace(" contiguous", "") + ("" if gpus == "1" else f" x{gpus}")
inside = "in" if lo <= m <= hi else "OUT"
print(f"   {what:<14} {machine:<6} {network:<10} {batch:<5} {numerics:<20} "
      f"{p:7.0f} [{lo:5.0f} - {hi:5.0f}]{'':4} {m:<9.0f} {100 * (p / m - 1):+6.1f}%  {confidence} {inside}")
PY
  done
}

table "2. whole steps on the measured H200, images/s" rows | tee /tmp/dnntune-gpu-accuracy-$$.txt
/usr/bin/python3 - /tmp/dnntune-gpu-accuracy-$$.txt <<'PY'
import re, statistics, sys
errors, inside = [], 0
for line in open(sys.argv[1]):
    found = re.search(r"([+-]\d+\.\d)%", line)
    if found:
        errors.append(abs(float(found.group(1))))
        inside += line.rstrip().endswith(" in")
print(f"   median |error| {statistics.median(errors):.1f}%, worst {max(errors):.1f}%, "
      f"{inside} of {len(errors)} inside the band (targets 10%, 20%, 80%)")
PY
rm -f /tmp/dnntune-gpu-accuracy-$$.txt
table "3. published anchors, images/s per GPU (carried over from the H200)" anchors
