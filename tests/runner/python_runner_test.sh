#!/usr/bin/env bash
# tests/runner/python_runner_test.sh DNNTUNE SOURCE_DIR — `dnntune train --runner python`
# (train/python_runner.hpp) with Debian's python3-torch and python3-torchvision, for real:
#   1. one process trains torchvision's resnet18: a report like the C++ trainer's (steps, passes,
#      finite falling-or-not losses, PyTorch's version), and records whose command reproduces it;
#   2. --launch --ppn 2: two ranks under DistributedDataParallel over gloo, each on its own core;
#   3. what it cannot train is refused with one line and exit 2, before anything is written: a
#      network torchvision does not build, an unknown runner, --module-times, a Python without torch,
#      --device cuda where that torch sees no GPU, a GPU precision on the CPU;
#   4. a first run (empty cache) trains its base anchor again by the C++ trainer and by PyTorch from
#      Python where its budget leaves the time, and says so where not; the fit pools the runs.
# Skipped (77) when /usr/bin/python3 cannot import torch and torchvision.
set -euo pipefail
dnntune=$1
source_dir=$2
/usr/bin/python3 -c "import torch, torchvision" 2>/dev/null || { echo "skipped: no python3-torch / python3-torchvision"; exit 77; }
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
refused() {  # refused NAME WHAT... : the command must exit 2 with one line on standard error
    local name=$1; shift
    local code=0
    "$@" >"$work/$name.out" 2>"$work/$name.log" || code=$?
    [[ $code == 2 ]] || fail "$name: exit $code, not 2"
    [[ $(wc -l <"$work/$name.log") == 1 ]] || fail "$name: not one line"
    [[ ! -e "$work/$name.jsonl" ]] || fail "$name: a record was written"
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
if ! /usr/bin/python3 -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    refused no_gpu "$dnntune" train --runner python --device cuda "${small[@]}" --record "$work/no_gpu.jsonl"
    grep -q "sees no CUDA GPU" "$work/no_gpu.log" || fail "the refusal of --device cuda does not say why"
fi
echo "ok: refusals are one line, exit 2"

# 4. A first run's base anchor, again by the C++ trainer and from Python, the runs pooled. The
# repeats come after the plan's stages with what those leave of --calibration-budget
# (pipeline/first_run.cpp): on a busy machine the stages take longer and a repeat is skipped, and
# said. So what is asserted holds at any speed: each repeat is either trained (announced, recorded
# once, by its trainer, and pooled into the anchor) or its skipping announced with the reason;
# the records are valid and none is duplicated. (The pooling rule itself, a Python run joining
# only as the third of three: tests/model_anchor_test.cpp.)
export DNNTUNE_CACHE_DIR=$work/cache
"$dnntune" predict --model resnet18 --batch 2 --ppn 1 --threads 2 --calibration-budget 200 --json \
    >"$work/predict.json" 2>"$work/first.log" || fail "the first run exited $?"
/usr/bin/python3 - "$work/predict.json" "$work/first.log" "$work"/cache/*/measurements/network.jsonl <<'PY' \
    || fail "the repeated base anchors"
import json, re, sys
prediction = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
records = [json.loads(line) for line in open(sys.argv[3])]
repeats = {"dnntune": "again by the C++ trainer, in a process of its own",
           "python": "by PyTorch from Python (torchvision), as users train"}
trained = {}
for trainer, by in repeats.items():
    ran = f"anchor: training resnet18 mb2 for real (2 threads) {by}" in log
    skipped = re.search(r"anchor of resnet18 mb2 " + re.escape(by) +
                        r" skipped: it would take about \d+ s, past the \d+ s left for it", log)
    assert ran != bool(skipped), (trainer, "neither trained nor said skipped" if not ran else "both")
    trained[trainer] = ran
    print(f"{trainer}: {'trained' if ran else 'skipped, said: ' + skipped[0]}")
# Every record one the fit reads (a run's passes, and the layers timed inside its steps), and no
# run's record written twice.
assert all(record["schema"] == "dnntune.measurement" and record["kind"] in ("network", "module") for record in records)
keys = [json.dumps(record, sort_keys=True) for record in records if record["kind"] == "network"]
assert len(keys) == len(set(keys)), "a run's record written twice"
base = [record for record in records if record["pass"] == "iteration" and record["status"] == "ok" and
        (record["processes"], record["threads"], record["batch"]) == (1, 2, 2) and
        record.get("allocator", "default") == "default"]
python_runs = [record for record in base if record["trainer"] == "python"]
cpp_runs = [record for record in base if record["trainer"] == "dnntune"]
# Python runs once, only as a repeat; the C++ trainer at least the base anchor and its repeat (the
# close calls after them may train the base setting again).
assert len(python_runs) == int(trained["python"]), python_runs
assert len(cpp_runs) >= 1 + int(trained["dnntune"]), cpp_runs
assert all("--runner python" in record["command"] for record in python_runs), python_runs[0]["command"]
anchor = prediction["anchor"]
assert anchor["exact"], anchor
# The C++ runs pool; Python's joins as the third of three (model/anchors.hpp).
assert anchor["runs"] >= min(len(cpp_runs), 2) + (1 if python_runs and len(cpp_runs) >= 2 else 0), anchor
print("ok: the base anchor pools", anchor["runs"], "runs:", anchor["text"])
PY
