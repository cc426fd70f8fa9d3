#!/usr/bin/env bash
# tests/runner/python_runner_test.sh DNNTUNE SOURCE_DIR — `dnntune train --runner python`
# (train/python_runner.hpp) with Debian's python3-torch and python3-torchvision, for real:
#   1. one process trains torchvision's resnet18: a report like the C++ trainer's (steps, passes,
#      finite falling-or-not losses, PyTorch's version), and records whose command reproduces it;
#   2. --launch --ppn 2: two ranks under DistributedDataParallel over gloo, each on its own core;
#   3. what it cannot train is refused with one line and exit 2, before anything is written: a
#      network torchvision does not build, an unknown runner, --module-times, a Python without torch,
#      --device cuda where that torch sees no GPU, a GPU precision on the CPU;
#   4. the base anchor trained again by the C++ trainer and by PyTorch from Python (what a first run
#      does with the time its stages leave; here calibrate --repeat-budget, a budget of their own),
#      and the fit pools the three runs: the prediction's anchor says so.
# A first run whose deciding anchors PyTorch trains: tests/runner/python_first_run_test.sh.
# Skipped (77) when /usr/bin/python3 cannot import torch and torchvision.
set -euo pipefail
dnntune=$1
source_dir=$2
/usr/bin/python3 "$source_dir/tests/python/has_modules.py" torch torchvision || { echo "skipped: no python3-torch / python3-torchvision"; exit 77; }
work=$(mktemp -d /tmp/dnntune-python-runner-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log; do echo "--- $log"; tail -20 "$log"; done >&2; exit 1; }
small=(--model resnet18 --batch 2 --iters 2 --warmup 1)

# 1. One process.
"$dnntune" train --runner python "${small[@]}" --threads 1 --json -o "$work/one.json" --record "$work/records.jsonl" \
    2>"$work/one.log" || fail "one process exited $?"
/usr/bin/python3 - "$work/one.json" "$work/records.jsonl" <<'PY' || fail "the one-process report or records"
import json, math, sys
report = json.load(open(sys.argv[1]))
assert report["network"] == "resnet18" and report["processes"] == 1 and report["batch"] == 2, report
assert report["backend"] == "torch" and "PyTorch" in report["backend_version"], report["backend_version"]
assert report["device"] == "cpu" and report["precision"] == "fp32", report  # the CPU path: strict fp32
assert report["memory_format"] == "contiguous" and report["skipped_steps"] == 0, report
assert report["iterations"] == 2 and report["images_per_second"] > 0, report
assert report["parameters"] == 11689512, report["parameters"]  # torchvision's resnet18
assert len(report["losses"]) == 3 and all(math.isfinite(loss) for loss in report["losses"]), report["losses"]
for phase in ("iteration", "forward", "backward", "optimizer"):
    assert report["timings"][phase]["median_seconds"] > 0, phase
records = [json.loads(line) for line in open(sys.argv[2])]
passes = {record["pass"] for record in records}
assert {"iteration", "forward", "backward", "optimizer"} <= passes, passes
assert all(record["kind"] == "network" for record in records), "module records without module times"
assert all("--runner python" in record["command"] for record in records), records[0]["command"]
assert all("precision" not in record and "memory_format" not in record for record in records), records[0]
assert all(record["trainer"] == "python" and record["schema_version"] == 2 for record in records), records[0]
print("ok: one process,", round(report["images_per_second"], 2), "images/s,", report["backend_version"])
PY

# 2. Two ranks, DDP over gloo, each bound to its own core by the launch line.
"$dnntune" train --runner python --launch --ppn 2 "${small[@]}" --threads 1 --json -o "$work/two.json" \
    2>"$work/two.log" || fail "two ranks exited $?"
/usr/bin/python3 - "$work/two.json" <<'PY' || fail "the two-rank report"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["processes"] == 2 and report["workers"] == 2 and report["strategy"] == "allreduce", report
cpus = [rank["cpus"] for rank in report["ranks"]]
assert len(cpus) == 2 and cpus[0] != cpus[1] and all(len(c) == 1 for c in cpus), cpus
assert all(rank["torch_threads"] == 1 for rank in report["ranks"]), report["ranks"]
print("ok: two ranks on cpus", cpus)
PY

# 3. Refusals: exit 2, one line, no record written.
check_refused() {  # check_refused NAME CODE: NAME's command exited CODE; a refusal is 2, one line, no record
    [[ $2 == 2 ]] || fail "$1: exit $2, not 2"
    [[ $(wc -l <"$work/$1.log") == 1 ]] || fail "$1: not one line"
    [[ ! -e "$work/$1.jsonl" ]] || fail "$1: a record was written"
}
refused() {  # refused NAME WHAT... : the command must exit 2 with one line on standard error
    local name=$1; shift
    local code=0
    "$@" >"$work/$name.out" 2>"$work/$name.log" || code=$?
    check_refused "$name" "$code"
}
refused network "$dnntune" train --runner python --model "$source_dir/tests/fixtures/tiny_network.json" --batch 2 \
    --record "$work/network.jsonl"
grep -q "torchvision" "$work/network.log" || fail "the refusal does not say what the python runner trains"
refused runner "$dnntune" train --runner julia "${small[@]}" --record "$work/runner.jsonl"
refused modules "$dnntune" train --runner python --module-times "${small[@]}" --record "$work/modules.jsonl"
refused launch_network "$dnntune" train --runner python --launch --ppn 2 --threads 1 --batch 2 \
    --model "$source_dir/tests/fixtures/tiny_network.json" --record "$work/launch_network.jsonl"
refused python env DNNTUNE_PYTHON=/nonexistent/python3 "$dnntune" train --runner python "${small[@]}" \
    --record "$work/python.jsonl"
refused cpu_precision "$dnntune" train --runner python --device cpu --precision bf16 "${small[@]}" \
    --record "$work/cpu_precision.jsonl"
# --device cuda: where this torch sees no GPU, refused as above, saying why; where it sees one, it
# trains there. (The command asks torch; importing torch here only to ask would cost as much.)
code=0
"$dnntune" train --runner python --device cuda "${small[@]}" --record "$work/cuda.jsonl" >"$work/cuda.out" \
    2>"$work/cuda.log" || code=$?
if [[ $code != 0 ]]; then
    check_refused cuda "$code"
    grep -q "sees no CUDA GPU" "$work/cuda.log" || fail "the refusal of --device cuda does not say why"
fi
# The repeats' own budget goes with --anchor, and is a positive number of seconds.
refused repeat_alone "$dnntune" calibrate --model resnet18 --batch 2 --repeat-budget 60 -o "$work/repeat_alone"
refused repeat_zero "$dnntune" calibrate --model resnet18 --batch 2 --anchor --repeat-budget 0 -o "$work/repeat_zero"
[[ ! -e "$work/repeat_alone" && ! -e "$work/repeat_zero" ]] || fail "a refused calibrate wrote its directory"
echo "ok: refusals are one line, exit 2"

# 4. The base anchor trained again by the C++ trainer and from Python, the runs pooled: what a first
# run does with the time its stages leave (pipeline/first_run.cpp; on a busy machine they leave none,
# and it says so: the suite's real first run, tests/cache/concurrent_first_run_test.sh, repeats its
# base anchor or says why not, checked by tests/cache/separating_anchor_test.sh). Here the repeats get a budget of their own (calibrate --repeat-budget), so both run at any
# speed; the micro-runs (--budget) and the allocator variants (--allocator-budget) are not what is
# tested and get next to nothing. (The pooling rule, a Python run joining only as the third of three:
# tests/model_anchor_test.cpp.)
"$dnntune" calibrate --model resnet18 --batch 2 --backend torch --threads 2 --processes 1 --budget 10 --anchor \
    --allocator-budget 1 --repeat-budget 600 -o "$work/anchored" >"$work/anchored.out" 2>"$work/anchored.log" \
    || fail "calibrate --anchor --repeat-budget exited $?"
grep -q "anchor: training resnet18 mb2 for real (2 threads) again by the C++ trainer" "$work/anchored.log" \
    || fail "the base anchor was not trained again by the C++ trainer"
grep -q "anchor: training resnet18 mb2 for real (2 threads) by PyTorch from Python (torchvision)" "$work/anchored.log" \
    || fail "the base anchor was not trained by PyTorch from Python"
grep -q "^Base anchor: 2 more runs trained for real" "$work/anchored.out" || fail "the repeated runs not reported"
"$dnntune" fit "$work/anchored" --backend torch -o "$work/anchored.json" >/dev/null 2>"$work/fit.log" || fail "fit exited $?"
"$dnntune" predict --calibration "$work/anchored.json" --model resnet18 --batch 2 --ppn 1 --threads 2 --json \
    >"$work/predict.json" 2>"$work/predict.log" || fail "predict exited $?"
/usr/bin/python3 - "$work/predict.json" "$work/anchored/network.jsonl" <<'PY' || fail "the pooled anchor"
import json, sys
records = [json.loads(line) for line in open(sys.argv[2])]
runs = [record for record in records if record["kind"] == "network" and record["pass"] == "iteration"]
keys = [json.dumps(record, sort_keys=True) for record in runs]
assert len(keys) == len(set(keys)), "a run's record written twice"
trainers = sorted(record["trainer"] for record in runs)
assert trainers == ["dnntune", "dnntune", "python"], trainers  # the base anchor, its repeat, Python's run
assert all("--runner python" in record["command"] for record in runs if record["trainer"] == "python"), runs
anchor = json.load(open(sys.argv[1]))["anchor"]
# The C++ trainer's two runs, and Python's as the third (model/anchors.hpp).
assert anchor["exact"] and anchor["runs"] == 3, anchor
print("ok: the base anchor pools", anchor["runs"], "runs:", anchor["text"])
PY
