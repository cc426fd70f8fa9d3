#!/usr/bin/env bash
# tests/scheduler/gpu_job_script_test.sh DNNTUNE SOURCE_DIR — the GPU job script `recommend
# --machine GPU --format slurm` writes, on a real scheduler: a one-node SLURM on loopback whose node
# has 2 GPUs as GRES (counted, no devices: tests/scheduler/one_node_slurm.sh) accepts its header
# (sbatch --test-only) and runs it: one task per GPU, each with its RANK and LOCAL_RANK, the job's
# GPUs visible, the pick's DNNTUNE_* settings, the node's CPUs shared evenly.
# Exit 77 (skipped) when not root: slurmd must run as root.
set -euo pipefail
dnntune=$1
source_dir=$2
[[ $(id -u) -eq 0 ]] || { echo "skipped: needs root to run slurmd"; exit 77; }

source "$source_dir/tests/scheduler/one_node_slurm.sh"

work=$(mktemp -d /tmp/dnntune-gpu-slurm-XXXXXX)
cleanup() { stop_one_node_slurm "$work"; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log; do echo "--- $log"; tail -20 "$log"; done >&2; exit 1; }

# The pick for 2 GPUs of an H200 node, bf16 (no real GPU: the script's launch is what is tested).
task_report='echo "task=$RANK local=$LOCAL_RANK world=$WORLD_SIZE gpus=${CUDA_VISIBLE_DEVICES:-none} precision=$DNNTUNE_PRECISION format=$DNNTUNE_MEMORY_FORMAT cpus=$DNNTUNE_CPUS_PER_GPU"'
DNNTUNE_CACHE_DIR=$work/cache "$dnntune" recommend --model resnet50 --machine h200 --gpus 2 --precision bf16 \
    --memory-format channels_last --time 10 --format slurm -- sh -c "$task_report" >"$work/job.sbatch" \
    || fail "recommend --format slurm"
grep -q '^#SBATCH --gres=gpu:2$' "$work/job.sbatch" || fail "no --gres=gpu:2 in the script"
grep -q '^#SBATCH --ntasks-per-node=2$' "$work/job.sbatch" || fail "no --ntasks-per-node=2 in the script"

start_one_node_slurm "$work" 26857 dnntune-gpu-test 2

sbatch --test-only "$work/job.sbatch" >"$work/test-only.log" 2>&1 || fail "sbatch --test-only refused the header"
cat "$work/test-only.log"
timeout 120 sbatch --wait --output="$work/slurm-output.txt" "$work/job.sbatch" >/dev/null || fail "sbatch"
cat "$work/slurm-output.txt"
[[ $(grep -c '^task=' "$work/slurm-output.txt") -eq 2 ]] || fail "expected 2 tasks, one per GPU"
for rank in 0 1; do
    grep -q "^task=$rank local=$rank world=2 gpus=0,1 precision=bf16 format=channels_last cpus=[1-9]" \
        "$work/slurm-output.txt" || fail "task $rank: not as the script sets it"
done
echo "the GPU job script runs one task per GPU with the pick's settings"
