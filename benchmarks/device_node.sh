#!/usr/bin/env bash
# benchmarks/device_node.sh [--dry-run] [OUT] — the one command for a GPU node, sized to end well
# inside one 9-minute call of the accelerator machine (one H200, 16 cores, no package registry).
# docs/gpu.md says how to run it. In order, each step with its own time budget (`timeout`), a
# step that no longer fits the time left skipped with a line:
#   build      dnntune against the node's CUDA libtorch (python3's torch) and the dependencies
#              unpacked from .gpu-bundle/debs (benchmarks/gpu_bundle.sh makes them);
#   probe      the node's CPUs;
#   calibrate  resnet50's layer passes on the GPU (torch-cuda) at every precision
#              (fp32 strict, tf32, bf16 and fp16 with channels_last), batch 32 and 64;
#   cpp        the C++ trainer (`dnntune train --device cuda`), resnet50, b32-b256, each precision;
#   python     PyTorch from Python (`--runner python`, torchvision), the same grid;
#   cpu        the tuner on the 16 host cores: `recommend --model resnet50 --batch 32` from an
#              empty cache against `train` of 1x16, 2x8, 4x4, 8x2 and 16x1 (ranks x threads);
#   calibrate-more  resnet152 and inception_v3 on the GPU at every precision, time allowing.
# Writes OUT/device-node.tar.gz (every record, report and log), OUT/summary.txt (the table) and
# OUT/device-node.log (this script's lines): three files, as the machine's $OUT takes at most 8.
#
# Environment: DEVICE_NODE_SECONDS (the whole script's deadline, default 480), DEVICE_NODE_STEPS
# (the steps to run, default all, e.g. "build probe cpu"), DEVICE_NODE_BATCHES (default
# "32 64 128 256"), DEVICE_NODE_DRY_RUN=1 or --dry-run (print the steps and budgets, run
# nothing: works without a GPU), DNNTUNE_GPU_PROFILE (the GPU's built-in profile; found from its
# name when empty), PYTHON (default python3).
#
# Never `exec > >(tee ...)` here and never `wait`: bash would wait for the tee too (it cost a lease
# 10 of its 15 minutes once). Every child runs in the foreground under `timeout`, which ends its
# whole process group (mpirun and its ranks too).
set -uo pipefail

dry_run=${DEVICE_NODE_DRY_RUN:-0}
if [ "${1:-}" = "--dry-run" ]; then
  dry_run=1
  shift
fi
repository=$(cd "$(dirname "$0")/.." && pwd)
source "$repository/benchmarks/gpu_bundle_env.sh"
out=$(mkdir -p "${1:-device-node-results}" && cd "${1:-device-node-results}" && pwd)
work=$(mktemp -d /tmp/device-node-XXXXXX)  # everything the tarball holds
log="$out/device-node.log"
: > "$log"
python=${PYTHON:-python3}
deadline_seconds=${DEVICE_NODE_SECONDS:-480}
steps=${DEVICE_NODE_STEPS:-"build probe calibrate cpp python cpu calibrate-more"}
batches=${DEVICE_NODE_BATCHES:-"32 64 128 256"}
precisions="fp32 tf32 bf16 fp16"
reserve=20  # seconds kept for the summary and the tarball
started=$(date +%s)
budgets_total=0

elapsed() { echo $(($(date +%s) - started)); }
left() { echo $((deadline_seconds - reserve - $(elapsed))); }
say() { echo "[$(elapsed) s] $*" | tee -a "$log"; }
wants() { case " $steps " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# run NAME BUDGET MINIMUM COMMAND... — runs COMMAND under `timeout` for at most BUDGET seconds (less
# when less is left), its output in $work/NAME.log; skipped with a line when under MINIMUM seconds
# are left. Returns the command's status (124: it ran out of time).
run() {
  local name=$1 budget=$2 minimum=$3
  shift 3
  local allowed
  allowed=$(left)
  [ "$allowed" -gt "$budget" ] && allowed=$budget
  if [ "$dry_run" = 1 ]; then
    budgets_total=$((budgets_total + budget))
    say "would run $name (budget ${budget} s, at least $minimum): $*"
    return 0
  fi
  if [ "$allowed" -lt "$minimum" ]; then
    say "skipped $name: $allowed s left, it needs $minimum"
    return 3
  fi
  local began status
  began=$(date +%s)
  timeout -k 5 "$allowed" "$@" > "$work/$name.log" 2>&1
  status=$?
  if [ "$status" -eq 0 ]; then
    say "$name: done in $(($(date +%s) - began)) s"
  elif [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    say "$name: stopped at its ${allowed} s budget"
  else
    say "$name: failed (exit $status): $(tail -1 "$work/$name.log")"
  fi
  return "$status"
}

finish() {
  if [ "$dry_run" = 1 ]; then
    say "dry run: nothing ran; the step budgets add up to ${budgets_total} s against a deadline of" \
      "${deadline_seconds} s (${reserve} s kept for the summary): the steps run in this order and those" \
      "that no longer fit are skipped"
    rm -rf "$work"
    return
  fi
  "$python" "$repository/benchmarks/device_node_summary.py" "$work" > "$out/summary.txt" 2>> "$log" ||
    echo "the summary failed: see device-node.log" >> "$out/summary.txt"
  cp "$out/summary.txt" "$log" "$work/" 2> /dev/null
  tar -czf "$out/device-node.tar.gz" -C "$work" . 2>> "$log"
  say "done: $out/device-node.tar.gz, $out/summary.txt"
  cat "$out/summary.txt"
}

# --- 0. what this node has ---
gpu=${DNNTUNE_GPU_PROFILE:-}
if [ "$dry_run" = 1 ]; then
  torch_prefix="(python3's torch.utils.cmake_prefix_path)"
  gpu_name="(the GPU)"
  gpu=${gpu:-h200}
else
  torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>> "$log")
  gpu_name=$("$python" -c 'import torch; print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")' \
    2>> "$log")
  if [ -z "$gpu_name" ]; then
    say "device_node: $python's torch sees no CUDA GPU (DEVICE_NODE_DRY_RUN=1 shows the plan without one)"
    exit 1
  fi
  if [ -z "$gpu" ]; then
    case "$gpu_name" in
      *H200*) gpu=h200 ;; *H100*) gpu=h100 ;; *A100*) gpu=a100 ;; *V100*) gpu=v100 ;; *P100*) gpu=p100 ;; *K80*) gpu=k80 ;;
      *) say "device_node: no built-in profile for '$gpu_name': set DNNTUNE_GPU_PROFILE"; exit 1 ;;
    esac
  fi
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$work/gpu.csv" 2>&1
fi
say "GPU: $gpu_name (profile $gpu); $(nproc) cores; deadline ${deadline_seconds} s; steps: $steps"

# --- 1. dependencies and build ---
build="$repository/build-gpu"
dnntune="$build/cli/dnntune"
prefix_paths="$torch_prefix"
cmake_extra=()
if [ -d "$repository/.gpu-bundle/debs" ] && [ "$dry_run" != 1 ]; then
  deps="$work/deps"
  use_gpu_bundle "$repository/.gpu-bundle/debs" "$deps"
  say "dependencies unpacked from $(find "$repository/.gpu-bundle/debs" -name '*.deb' | wc -l) bundled packages"
fi
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
if wants build; then
  run configure 60 20 cmake -S "$repository" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix_paths" "${cmake_extra[@]}" &&
    run build 150 40 cmake --build "$build" -j "$(nproc)" --target dnntune
fi
if [ "$dry_run" != 1 ] && [ ! -x "$dnntune" ]; then
  say "no $dnntune: nothing else can run"
  finish
  exit 1
fi

# --- 2. probe ---
wants probe && run probe 30 10 "$dnntune" probe -o "$work/machine.json"

# --- 3. the GPU's layer passes at every precision ---
calibrate_gpu() {  # calibrate_gpu NAME BUDGET NETWORK...
  local name=$1 budget=$2
  shift 2
  local models=()
  for network in "$@"; do models+=(--model "$network"); done
  run "$name" "$budget" 20 "$dnntune" calibrate "${models[@]}" --backend torch-cuda --precision fp32,tf32,bf16,fp16 \
    --batch 32 --batch 64 --threads 1 --processes 1 --no-smt --budget "$((budget - 15))" -o "$work/$name"
}
wants calibrate && calibrate_gpu calibrate-resnet50 75 resnet50

# --- 4, 5. the trainers at each precision and batch ---
precision_options() {  # the options of one precision: mixed precision goes with channels_last
  case $1 in
    bf16 | fp16) echo "--precision $1 --memory-format channels_last" ;;
    *) echo "--precision $1" ;;
  esac
}
train_grid() {  # train_grid RUNNER BUDGET_PER_RUN
  local runner=$1 per_run=$2
  for batch in $batches; do
    for precision in $precisions; do
      # shellcheck disable=SC2046  # the options are words
      run "train-$runner-resnet50-$precision-$batch" "$per_run" 8 "$dnntune" train --runner "$runner" --device cuda \
        --model resnet50 --batch "$batch" $(precision_options "$precision") --warmup 3 --iters 10 --time-limit 3 \
        --record "$work/train-$runner.jsonl" --json -o "$work/train-$runner-resnet50-$precision-$batch.json"
    done
  done
}
wants cpp && train_grid dnntune 25
wants python && train_grid python 30

# --- 6. the tuner on the host's cores, from an empty cache, against the trainer ---
if wants cpu; then
  cores=$(nproc)
  export DNNTUNE_CACHE_DIR="$work/cpu-cache"
  mkdir -p "$DNNTUNE_CACHE_DIR"
  # No GPU in sight for these: a first run's anchors train with `--device auto`, which would take
  # the GPU, and the CPU's calibration must be trained on the CPU.
  run cpu-recommend 200 60 env CUDA_VISIBLE_DEVICES= "$dnntune" recommend --model resnet50 --batch 32 --json -o "$work/cpu-recommend.json"
  for ranks in 1 2 4 8 16; do
    [ "$ranks" -gt "$cores" ] && continue
    threads=$((cores / ranks))
    run "cpu-train-${ranks}x$threads" 40 15 env CUDA_VISIBLE_DEVICES= "$dnntune" train --launch --ppn "$ranks" --threads "$threads" \
      --model resnet50 --batch 32 --device cpu --warmup 1 --iters 3 --time-limit 12 \
      --record "$work/cpu-train.jsonl" --json -o "$work/cpu-train-${ranks}x$threads.json"
  done
fi

# --- 7. the other networks' layer passes, time allowing ---
wants calibrate-more && calibrate_gpu calibrate-resnet152-inception 90 resnet152 inception_v3

finish
