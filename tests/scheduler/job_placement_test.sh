#!/usr/bin/env bash
# tests/scheduler/job_placement_test.sh DNNTUNE SOURCE_DIR — the emitted job scripts place ranks
# as recommended, checked on a real scheduler: a one-node SLURM (munge + slurmctld + slurmd from
# Debian's slurm-wlm, on loopback, generated config, as root) runs the `--format slurm` script,
# and real Open MPI runs the `--format mpirun` line; every task prints its CPU set and
# OMP_NUM_THREADS, and the test checks task count, thread count and disjoint CPU sets.
# Exit 77 (skipped) when not root: slurmd must manage CPU binding.
set -euo pipefail
dnntune=$1
source_dir=$2
[[ $(id -u) -eq 0 ]] || { echo "skipped: needs root to run slurmd"; exit 77; }

source "$source_dir/tests/scheduler/one_node_slurm.sh"

work=$(mktemp -d /tmp/dnntune-slurm-XXXXXX)
cleanup() { stop_one_node_slurm "$work"; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log; do echo "--- $log"; tail -20 "$log"; done >&2; exit 1; }

# 1. A calibration of this machine: real micro-runs of a tiny network, fitted.
network=$source_dir/tests/fixtures/tiny_network.json
# The placement, not a calibration, is what is tested (calibrate --slurm is slurm_calibration_test.sh):
# the answer comes from a calibration fitted from the recorded one, for this node's topology.
"$dnntune" fit "$source_dir/tests/fixtures/anchored_resnet18_calibration" -o "$work/calibration.json" --bootstrap 4 \
    >"$work/fit.log" 2>&1 || fail "fit"

# 2. The recommendation, its SLURM script and its mpirun line.
task_report='echo "task=${SLURM_PROCID:-${OMPI_COMM_WORLD_RANK:-?}} omp=$OMP_NUM_THREADS cpus=$(grep Cpus_allowed_list /proc/self/status | cut -f2)"'
recommend=("$dnntune" recommend --model "$network" --batch 4 --calibration "$work/calibration.json")
"${recommend[@]}" --format json >"$work/recommendation.json" || fail "recommend --format json"
"${recommend[@]}" --format slurm -- sh -c "$task_report" >"$work/job.sbatch" || fail "recommend --format slurm"
"${recommend[@]}" --format mpirun -- sh -c "$task_report" >"$work/job.mpirun" || fail "recommend --format mpirun"
best() { sed -n '/"best"/,/"ranking"/p' "$work/recommendation.json" | grep -m1 "\"$1\"" | sed 's/[^0-9]//g'; }
ppn=$(best processes_per_node)
threads=$(best threads_per_process)
cpus_per_task=$(sed -n 's/^#SBATCH --cpus-per-task=//p' "$work/job.sbatch")
echo "recommended: $ppn processes x $threads threads; script: $cpus_per_task CPUs per task"
grep -q "^#SBATCH --ntasks-per-node=$ppn\$" "$work/job.sbatch" || fail "script's ntasks-per-node is not $ppn"
grep -q "^export OMP_NUM_THREADS=$threads\$" "$work/job.sbatch" || fail "script's OMP_NUM_THREADS is not $threads"

# Each task line: its OMP_NUM_THREADS is the recommended one, its CPU list has cpus_per_task CPUs,
# and no CPU is in two tasks' lists.
check_tasks() {
    local output=$1 expected_cpus=$2
    [[ $(grep -c '^task=' "$output") -eq $ppn ]] || fail "$output: expected $ppn tasks"
    grep '^task=' "$output" | grep -vq " omp=$threads " && fail "$output: a task has OMP_NUM_THREADS != $threads"
    local all_cpus=()
    while read -r list; do
        local cpus=()
        IFS=',' read -ra ranges <<<"$list"
        for range in "${ranges[@]}"; do
            if [[ $range == *-* ]]; then cpus+=($(seq "${range%-*}" "${range#*-}")); else cpus+=("$range"); fi
        done
        [[ ${#cpus[@]} -eq $expected_cpus ]] || fail "$output: a task has CPUs $list, expected $expected_cpus of them"
        all_cpus+=("${cpus[@]}")
    done < <(sed -n 's/.* cpus=//p' "$output")
    [[ $(printf '%s\n' "${all_cpus[@]}" | sort -u | wc -l) -eq ${#all_cpus[@]} ]] || fail "$output: tasks share CPUs"
}

# 3. A one-node SLURM on loopback (tests/scheduler/one_node_slurm.sh).
start_one_node_slurm "$work" 26817 dnntune-test

timeout 120 sbatch --wait --output="$work/slurm-output.txt" "$work/job.sbatch" >/dev/null || fail "sbatch"
cat "$work/slurm-output.txt"
check_tasks "$work/slurm-output.txt" "$cpus_per_task"

# 4. The mpirun line, run for real (as root here, so mpirun must be told that is fine).
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 bash "$work/job.mpirun" >"$work/mpirun-output.txt" \
    2>"$work/mpirun.log" || fail "mpirun line"
cat "$work/mpirun-output.txt"
check_tasks "$work/mpirun-output.txt" "$cpus_per_task"
echo "placement as recommended under SLURM and mpirun"
