#!/usr/bin/env bash
# tests/scheduler/slurm_calibration_test.sh DNNTUNE SOURCE_DIR — the SLURM calibration round trip
# on a real scheduler (a one-node SLURM on loopback, tests/scheduler/one_node_slurm.sh):
# `calibrate --slurm --partition test` submits the exclusive node job, waits with progress, and
# the job's probe, micro-runs and fit land in the cache with the node's record;
# `recommend --partition test` answers from that calibration and says so; `--no-wait` returns at
# once and says how to pick the result up; names that would reach a job script are refused.
# Exit 77 (skipped) when not root: slurmd must run as root here.
set -euo pipefail
dnntune=$1
source_dir=$2
[[ $(id -u) -eq 0 ]] || { echo "skipped: needs root to run slurmd"; exit 77; }
source "$source_dir/tests/scheduler/one_node_slurm.sh"

work=$(mktemp -d /tmp/dnntune-slurm-calibration-XXXXXX)
cleanup() { stop_one_node_slurm "$work"; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log "$work"/cache/slurm/jobs/*.out; do [[ -f $log ]] || continue; echo "--- $log"; tail -20 "$log"; done >&2; exit 1; }

export DNNTUNE_CACHE_DIR=$work/cache DNNTUNE_SLURM_POLL_SECONDS=1
network=$source_dir/tests/fixtures/tiny_network.json

# Bad input is refused before anything is submitted (exit 2, one line).
expect_bad() {
    local status=0
    "$dnntune" "$@" >"$work/bad.out" 2>"$work/bad.err" || status=$?
    [[ $status -eq 2 ]] || fail "$* exited $status, expected 2"
    [[ $(wc -l <"$work/bad.err") -eq 1 ]] || fail "$*: expected a one-line error, got: $(cat "$work/bad.err")"
}
expect_bad calibrate --slurm --partition 'test;rm -rf /' --model "$network"
expect_bad calibrate --slurm --partition test --model "$network" --time 'soon'
expect_bad calibrate --slurm --partition test --model no-such-network
expect_bad calibrate --slurm --partition test          # no --model
expect_bad calibrate --partition test --model "$network"  # --partition without --slurm
[[ ! -d $work/cache/slurm ]] || fail "a refused request wrote into the cache"

start_one_node_slurm "$work" 26837 dnntune-calibration-test
node=$(hostname)
expect_bad calibrate --slurm --partition no-such-partition --model "$network"

# 1. The round trip, waiting with progress.
timeout 900 "$dnntune" calibrate --slurm --partition test --model "$network" --batch 4 --budget 10 \
    >"$work/calibrate.out" 2>"$work/calibrate.log" || fail "calibrate --slurm"
cat "$work/calibrate.log" "$work/calibrate.out"
grep -q "submitted job [0-9]*" "$work/calibrate.log" || fail "no submission reported"
grep -q "job [0-9]*: RUNNING\|job [0-9]*: PENDING" "$work/calibrate.log" || fail "no job state reported while waiting"
grep -q "one node: no fabric to sweep" "$work/calibrate.log" || fail "a one-node partition must not get a fabric job"
grep -q "^Calibrated $node of partition test" "$work/calibrate.out" || fail "no calibration reported"
record=$work/cache/slurm/nodes/$node.json
[[ -f $record ]] || fail "no node record $record"
grep -q '"schema": "dnntune.slurm-node"' "$record" || fail "the node record has no schema head"
calibration=$(sed -n 's/.*"calibration": "\(.*\)".*/\1/p' "$record")
[[ -f $calibration ]] || fail "the recorded calibration $calibration does not exist"
fingerprint=$(sed -n 's/.*"fingerprint": "\(.*\)".*/\1/p' "$record")
[[ $calibration == "$work/cache/$fingerprint-"* ]] || fail "the calibration is not keyed by the node's fingerprint"

# 2. recommend --partition answers from it, and says so.
"$dnntune" recommend --model "$network" --batch 4 --partition test >"$work/recommend.txt" 2>"$work/recommend.log" \
    || fail "recommend --partition"
cat "$work/recommend.txt"
grep -q "basis: calibration of partition test: measured on node $node of partition test by SLURM job" \
    "$work/recommend.txt" || fail "the answer does not name the partition's calibration"
grep -q "calibrating" "$work/recommend.log" && fail "recommend --partition calibrated the login node instead"
"$dnntune" recommend --model "$network" --batch 4 --partition test --format slurm -- true >"$work/job.sbatch" \
    || fail "recommend --partition --format slurm"
grep -q "^#SBATCH --partition=test$" "$work/job.sbatch" || fail "the job script lost its partition"
# --verify would train the login node, not the partition's: refused.
expect_bad recommend --model "$network" --batch 4 --partition test --verify 2

# 3. --no-wait returns at once and says how to pick the result up; the job then refreshes the record.
before=$(sed -n 's/.*"job": "\(.*\)".*/\1/p' "$record")
"$dnntune" calibrate --slurm --no-wait --partition test --model "$network" --batch 4 --budget 10 >"$work/no-wait.out" \
    2>"$work/no-wait.log" || fail "calibrate --slurm --no-wait"
cat "$work/no-wait.out"
job=$(sed -n 's/^Submitted SLURM job \([0-9]*\).*/\1/p' "$work/no-wait.out")
[[ -n $job ]] || fail "--no-wait did not name its job"
grep -q "When it has finished: dnntune recommend --partition test" "$work/no-wait.out" || fail "--no-wait did not say how to use the result"
for _ in $(seq 600); do squeue -h -j "$job" 2>/dev/null | grep -q . || break; sleep 1; done
after=$(sed -n 's/.*"job": "\(.*\)".*/\1/p' "$record")
[[ $after == "$job" && $after != "$before" ]] || fail "job $job did not record the node (record names job $after)"
echo "SLURM calibration round trip: node $node, fingerprint $fingerprint, jobs $before and $job"
