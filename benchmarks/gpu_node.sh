#!/usr/bin/env bash
# benchmarks/gpu_node.sh [OUT] — the one command to run on a GPU node (and on the accelerator
# machine: one H200, 16 cores, no package registry; in under 10 minutes). It
#   1. builds dnntune against the node's CUDA libtorch (python3's torch and its CMake files) and
#      the other dependencies unpacked from .gpu-bundle/debs (benchmarks/gpu_bundle.sh makes them
#      on a machine with Debian's apt; a node that has them installed needs no bundle);
#   2. probes the node's CPUs (machine.json);
#   3. calibrates resnet50's layer passes on the GPU (torch-cuda, CUDA events) at batch 32 and 64
#      and fits the GPU model's efficiencies to them (OUT/gpu-calibration.json: per-pass predicted
#      against measured, priors and fitted, with the median error);
#   4. trains resnet50 and resnet152 for real on one GPU at batch 32 and 64 and prints predicted
#      (priors, and the fitted calibration) against measured images/s.
# Everything goes to OUT (default ./gpu-node-results): the logs, records and JSON behind the table.
# Commit OUT/gpu-calibration.json as data/reference_calibrations/torch-cuda.json to make it the
# built-in GPU reference calibration; say which GPU it was measured on.
set -euo pipefail
repository=$(cd "$(dirname "$0")/.." && pwd)
source "$repository/benchmarks/gpu_bundle_env.sh"
out=$(mkdir -p "${1:-gpu-node-results}" && cd "${1:-gpu-node-results}" && pwd)
python=${PYTHON:-python3}
jobs=$(nproc)
gpu=${DNNTUNE_GPU_PROFILE:-}  # the built-in profile of this GPU; found from its name when empty
started=$(date +%s)
stamp() { echo "[$(($(date +%s) - started)) s] $*"; }

# --- 0. what this node has ---
torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
gpu_name=$("$python" -c 'import torch; print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")')
if [ -z "$gpu_name" ]; then
  echo "gpu_node: $python's torch sees no CUDA GPU" >&2
  exit 1
fi
if [ -z "$gpu" ]; then
  case "$gpu_name" in
    *H200*) gpu=h200 ;; *H100*) gpu=h100 ;; *A100*) gpu=a100 ;; *V100*) gpu=v100 ;; *P100*) gpu=p100 ;; *K80*) gpu=k80 ;;
    *) echo "gpu_node: no built-in profile for '$gpu_name': set DNNTUNE_GPU_PROFILE to a profile JSON" >&2; exit 1 ;;
  esac
fi
stamp "GPU: $gpu_name (profile $gpu); torch's CMake files: $torch_prefix"

# --- 1. dependencies and build ---
prefix_paths="$torch_prefix"
cmake_extra=()
if [ -d "$repository/.gpu-bundle/debs" ]; then
  deps="$out/deps"
  rm -rf "$deps"
  use_gpu_bundle "$repository/.gpu-bundle/debs" "$deps"
  stamp "dependencies unpacked from $(ls "$repository"/.gpu-bundle/debs/*.deb | wc -l) bundled packages"
fi
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
build="$repository/build-gpu"
cmake -S "$repository" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix_paths" \
  "${cmake_extra[@]}" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$jobs" --target dnntune > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
dnntune="$build/cli/dnntune"
stamp "built $dnntune"

# --- 2. probe ---
"$dnntune" probe -o "$out/machine.json" > "$out/probe.log" 2>&1 || { tail -5 "$out/probe.log"; exit 1; }
stamp "probed the node's CPUs"

# --- 3. calibrate resnet50's layer passes on the GPU, fit the GPU model ---
"$dnntune" calibrate --model resnet50 --backend torch-cuda --batch 32 --batch 64 --threads 1 --processes 1 \
  --no-smt --budget 150 -o "$out/calibration" > "$out/calibrate.log" 2>&1 || { tail -10 "$out/calibrate.log"; exit 1; }
"$dnntune" fit "$out/calibration" --backend torch-cuda --machine "$gpu" -o "$out/gpu-calibration.json" \
  | tee "$out/fit.txt"
stamp "calibrated and fitted"

# --- 4. train for real and compare ---
printf '%-10s %-6s %-14s %-22s %-22s\n' network batch "measured" "predicted (priors)" "predicted (fitted)"
for network in resnet50 resnet152; do
  for batch in 32 64; do
    "$dnntune" train --model "$network" --device cuda --batch "$batch" --warmup 3 --iters 20 --json \
      > "$out/train-$network-$batch.json" 2> "$out/train-$network-$batch.log" || {
      tail -5 "$out/train-$network-$batch.log"; continue; }
    "$dnntune" predict --model "$network" --machine "$gpu" --batch "$batch" --json > "$out/predict-$network-$batch.json"
    "$dnntune" predict --model "$network" --machine "$gpu" --batch "$batch" --calibration "$out/gpu-calibration.json" \
      --json > "$out/predict-fitted-$network-$batch.json"
    "$python" - "$out" "$network" "$batch" << 'PY'
import json, sys
out, network, batch = sys.argv[1:]
measured = json.load(open(f"{out}/train-{network}-{batch}.json"))["images_per_second"]
def cell(name):
    d = json.load(open(f"{out}/{name}-{network}-{batch}.json"))
    value = d["images_per_second"]
    return "%.0f (%+.0f%%)" % (value, 100 * (value / measured - 1))
print("%-10s %-6s %-14s %-22s %-22s" % (network, batch, "%.0f" % measured, cell("predict"), cell("predict-fitted")))
PY
  done
done
stamp "done: results in $out"
