#!/usr/bin/env bash
# tests/launch/ddp_launch_test.sh DNNTUNE SOURCE_DIR — the launch lines `recommend` emits start a
# real PyTorch DDP job (Debian's python3-torch, 2 ranks, gloo): under torchrun and under mpirun
# each rank gets RANK / LOCAL_RANK / WORLD_SIZE, the recommended thread count, a CPU set of its
# own and the chosen batch, and the ranks all-reduce. With --allocator, every rank has the
# allocator loaded (its /proc/self/maps). Then each rank trains torchvision's resnet18 under the
# hook dnntune.observe: both jobs are recorded with their launcher, layout and the prediction the
# line carried, and `dnntune jobs` lists them with the current model's. Skipped (77) without python3-torch.
set -euo pipefail
dnntune=$1
source_dir=$2
/usr/bin/python3 "$source_dir/tests/python/has_modules.py" torch || { echo "skipped: no python3-torch"; exit 77; }
work=$(mktemp -d /tmp/dnntune-ddp-XXXXXX)
trap 'rm -rf "$work"' EXIT
# torchrun's agent leaves a torchelastic_* folder in the temporary directory: this test's own.
mkdir "$work/tmp"
export TMPDIR=$work/tmp
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log; do echo "--- $log"; tail -20 "$log"; done >&2; exit 1; }
export DNNTUNE_CACHE_DIR=$work/cache
rank_script=$source_dir/tests/launch/ddp_rank.py
# Two processes of one thread on this 2-core node: the case where binding matters. The lines, not a
# first run, are what is tested: the answer comes from a calibration fitted from the recorded one.
"$dnntune" fit "$source_dir/tests/fixtures/anchored_resnet18_calibration" -o "$work/calibration.json" --bootstrap 4 \
    >"$work/fit.log" 2>&1 || fail "fit"
# The hook: the package from this build, the record in a file of the test's own.
export PYTHONPATH=$(dirname "$dnntune")/../python DNNTUNE_EXECUTABLE=$dnntune DNNTUNE_JOB_RECORD=$work/jobs.jsonl
recommend=("$dnntune" recommend --model resnet18 --batch 4 --ppn 2 --no-smt --calibration "$work/calibration.json")

check_ranks() {  # check_ranks LAUNCHER [ALLOCATOR]
    /usr/bin/python3 - "$work/out-$1" "$2" <<'PY' || fail "$1: the ranks did not get what was recommended"
import json, sys, glob
ranks = [json.load(open(path)) for path in sorted(glob.glob(sys.argv[1] + "/rank*.json"))]
assert len(ranks) == 2, f"{len(ranks)} ranks reported"
for r in ranks:
    assert r["rank"] == r["env_rank"] and r["world_size"] == r["env_world_size"] == 2, r
    assert r["rank_sum"] == 1.0, r
    assert r["threads"] == r["omp_num_threads"] == 1, r
    assert len(r["cpus"]) == 1, r
    assert r["batch"] == 4, r
    if sys.argv[2]:
        assert sys.argv[2] in r["ld_preload"] and r["maps_allocator"], r
assert sorted(r["local_rank"] for r in ranks) == [0, 1]
assert ranks[0]["cpus"] != ranks[1]["cpus"], "the ranks share a CPU"
print("ok:", ", ".join(f"rank {r['rank']} cpus {r['cpus']} threads {r['threads']}" for r in ranks))
PY
}

"${recommend[@]}" --format torchrun -- /usr/bin/python3 "$rank_script" "$work/out-torchrun" observe >"$work/torchrun.sh" 2>"$work/recommend.log" \
    || fail "recommend --format torchrun"
mkdir -p "$work/out-torchrun"
# Debian's torchrun cannot start under Python 3.11 (see torchrun_shim.py): the line runs as
# emitted, with the shim in torchrun's place.
sed -i "s|^torchrun |/usr/bin/python3 $source_dir/tests/launch/torchrun_shim.py |" "$work/torchrun.sh"
MASTER_PORT=29611 timeout 120 bash "$work/torchrun.sh" >"$work/torchrun.log" 2>&1 || fail "the torchrun line"
check_ranks torchrun ""

allocator=""
[[ -e /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ]] && allocator=jemalloc
"${recommend[@]}" --format mpirun ${allocator:+--allocator $allocator} -- /usr/bin/python3 "$rank_script" "$work/out-mpirun" observe \
    >"$work/mpirun.sh" 2>>"$work/recommend.log" || fail "recommend --format mpirun"
mkdir -p "$work/out-mpirun"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MASTER_PORT=29612 timeout 120 bash "$work/mpirun.sh" \
    >"$work/mpirun.log" 2>&1 || fail "the mpirun line"
check_ranks mpirun "$allocator"

# The two jobs the hook recorded, as `dnntune jobs` lists them.
"$dnntune" jobs --calibration "$work/calibration.json" --json >"$work/jobs.json" 2>"$work/jobs.log" || fail "dnntune jobs"
/usr/bin/python3 - "$work/jobs.json" <<'PY' || fail "the hook's records"
import json, sys
listed = json.load(open(sys.argv[1]))
jobs = listed["jobs"]
assert [job["launcher"] for job in jobs] == ["torchrun", "mpirun"], (jobs, listed["not_taken"])
for job in jobs:
    assert job["network"] == "resnet18" and job["batch_per_process"] == 4 and job["processes_per_node"] == 2, job
    assert job["threads_per_process"] == 1 and job["nodes"] == 1 and len(job["rank_median_seconds"]) == 2, job
    assert job["predicted_before"] and job["predicted_now"] and job["error_before"] is not None, job
print("ok:", "; ".join(f"{j['launcher']}: {j['observed_images_per_second']:.2f} images/s, predicted "
                       f"{j['predicted_before']:.2f} before, {j['predicted_now']:.2f} now" for j in jobs))
PY
