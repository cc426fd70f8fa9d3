#!/usr/bin/env bash
# tests/cluster/job_fabric_test.sh DNNTUNE SOURCE_DIR — the user's multi-node jobs teach the model
# their fabric (issue 62): real PyTorch DDP jobs (gloo) with the hook dnntune.observe on 1, 2, 3 and 4
# emulated nodes (cluster/emulated_cluster.sh: network namespaces, links shaped to 200 Mb/s, which
# the jobs' launch names eth10 through DNNTUNE_FABRIC, as a launch line would). The jobs of 1, 2 and 4
# nodes fit the link's terms (the 3-node job is held back):
# the fitted terms give the all-reduce over 2 nodes the time the shaped link takes (or more: a ring
# step's handshakes), `dnntune predict` at 3 nodes errs far less after the fit than before it (eth10's
# preset is 50x the link), its answer names the jobs it rests on, and so does recommend's basis. The
# figures are printed.
# The model of the network's compute is this machine's (the jobs carry its fingerprint): micro-runs of
# its few layers, fitted. Exit 77 (skipped) when not root, without network namespaces or python3-torch.
set -euo pipefail
dnntune=$1
source_dir=$2
source "$source_dir/tests/cluster/needs_namespaces.sh"
/usr/bin/python3 "$source_dir/tests/python/has_modules.py" torch || { echo "skipped: no python3-torch"; exit 77; }

work=$(mktemp -d /tmp/dnntune-job-fabric-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log; do echo "--- $log"; tail -n 20 "$log"; done >&2; exit 1; }
export DNNTUNE_CACHE_DIR=$work/cache
network=$source_dir/tests/fixtures/wide_linear_network.json
"$dnntune" calibrate --model "$network" --batch 8 --budget 20 -o "$work/measured" >"$work/calibrate.log" 2>&1 || fail "calibrate"
"$dnntune" fit "$work/measured" -o "$work/calibration.json" >"$work/fit.log" 2>&1 || fail "fit"

# The jobs: one mpirun per node count across the cluster's 4 nodes (one slot each: -np N takes N nodes).
export PYTHONPATH=$(dirname "$dnntune")/../python DNNTUNE_EXECUTABLE=$dnntune DNNTUNE_JOB_RECORD=$work/jobs.jsonl \
    DNNTUNE_FABRIC=eth10 OMP_NUM_THREADS=1 DNT_TEST_NETWORK=$network DNT_TEST_WORK=$work \
    DNT_TEST_JOB=$source_dir/tests/cluster/observed_job.py
"$source_dir/cluster/emulated_cluster.sh" --nodes 4 --mbit 200 -- bash -c '
    set -e
    export DNT_MASTER_ADDR=${DNT_CLUSTER_SUBNET%.0/24}.1
    for nodes in 1 2 4 3; do
        export DNNTUNE_JOB_ID=emulated-$nodes DNT_MASTER_PORT=$((29400 + nodes))
        $DNT_CLUSTER_MPIRUN -np $nodes -x PYTHONPATH -x DNNTUNE_EXECUTABLE -x DNNTUNE_JOB_RECORD -x DNNTUNE_FABRIC \
            -x DNNTUNE_JOB_ID -x DNNTUNE_CACHE_DIR -x OMP_NUM_THREADS -x DNT_MASTER_ADDR -x DNT_MASTER_PORT \
            /usr/bin/python3 "$DNT_TEST_JOB" "$DNT_TEST_NETWORK" 12 >"$DNT_TEST_WORK/job-$nodes.log" 2>&1
    done
' || fail "a job inside the emulated cluster"
[[ $(grep -cE '"kind": ?"job"' "$work/jobs.jsonl") -eq 4 ]] || fail "expected 4 job records in jobs.jsonl"
grep -v '"emulated-3"' "$work/jobs.jsonl" >"$work/fit.jsonl"
grep '"emulated-3"' "$work/jobs.jsonl" >"$work/held-back.jsonl"

answer() {  # answer JOBS_FILE COMMAND ARGS...: the command's answer with JOBS_FILE as the jobs recorded
    local jobs=$1
    shift
    DNNTUNE_JOB_RECORD=$jobs "$dnntune" "$@" --calibration "$work/calibration.json" --model "$network" --batch 8
}
"$dnntune" jobs --jobs-file "$work/fit.jsonl" --calibration "$work/calibration.json" --json >"$work/jobs.json" \
    2>"$work/jobs.log" || fail "dnntune jobs"
predict=(predict --ppn 1 --threads 1 --nodes 3 --fabric eth10 --json)
answer "$work/none.jsonl" "${predict[@]}" >"$work/before.json" 2>"$work/before.log" || fail "predict before"
answer "$work/fit.jsonl" "${predict[@]}" >"$work/after.json" 2>"$work/after.log" || fail "predict after"
answer "$work/fit.jsonl" recommend --nodes 4 --fabric eth10 >"$work/recommend.txt" 2>"$work/recommend.log" ||
    fail "recommend"

/usr/bin/python3 - "$work" <<'PY' || fail "the jobs did not fit the link's terms"
import json, re, sys
work = sys.argv[1]
jobs = json.load(open(work + "/jobs.json"))
held_back = json.loads(open(work + "/held-back.jsonl").readline())
before, after = json.load(open(work + "/before.json")), json.load(open(work + "/after.json"))
assert jobs["not_fitted"] == [], jobs["not_fitted"]
assert len(jobs["fabrics_fitted"]) == 1 and jobs["fabrics_fitted"][0].startswith("eth10: 2 jobs of yours on eth10 "
                                                                                  "(2 and 4 nodes"), jobs["fabrics_fitted"]
fitted = jobs["fabrics_fitted"][0]
bandwidth = float(re.search(r": ([0-9.]+) GB/s", fitted).group(1))
latency = float(re.search(r"GB/s, ([0-9.]+) ms per ring step", fitted).group(1)) / 1e3
for row in jobs["jobs"]:
    print("job %-11s %d node(s): %7.2f images/s, step %.3f s; the current model %s" % (
        row["id"], row["nodes"], row["observed_images_per_second"], row["step_seconds"]["median"],
        "%.2f images/s" % row["predicted_now"] if row["predicted_now"] else "-"))
print("fitted:", fitted)
# The all-reduce of the network's gradients over 2 nodes as the fitted terms give it, against what
# the shaped link takes for its volume alone (200 Mb/s is 0.025 GB/s): no faster (the fit sees the
# link, not loopback), and within what a ring step's handshakes and the ranks' shared cores add.
gradient_bytes = 4 * (1024 * 1024 + 1024 + 1024 * 10 + 10)
fitted_ring = 2 * latency + gradient_bytes / (bandwidth * 1e9)
link_volume = gradient_bytes / 0.025e9
print("all-reduce of %.2f MB over 2 nodes: %.3f s by the fitted terms, %.3f s the shaped link's volume" % (
    gradient_bytes / 1e6, fitted_ring, link_volume))
assert 0.8 < fitted_ring / link_volume < 4, "the fitted terms do not describe the shaped link"
observed = 3 * 8 / held_back["median_seconds"]
error_before = before["images_per_second"] / observed - 1
error_after = after["images_per_second"] / observed - 1
print("held-back 3 nodes: ran %.2f images/s; predicted %.2f before the jobs (%+.0f%%, %s), %.2f after (%+.0f%%)" % (
    observed, before["images_per_second"], 100 * error_before, before["inter_node_link"], after["images_per_second"],
    100 * error_after))
assert after["inter_node_link"].startswith("2 jobs of yours on eth10"), after["inter_node_link"]
assert abs(error_after) < abs(error_before) / 2, "the fit did not bring the held-back prediction closer"
PY
grep -q "basis: between nodes on eth10: 2 jobs of yours on eth10 (2 and 4 nodes" "$work/recommend.txt" ||
    fail "recommend --nodes 4 --fabric eth10 does not say it rests on the jobs: $(grep basis "$work/recommend.txt")"
echo "emulated jobs fitted the link's terms; recommend's basis names them"
