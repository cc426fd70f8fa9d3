#!/usr/bin/env bash
# tests/cache/separating_anchor_test.sh DNNTUNE SOURCE_DIR FIRST_RUN — the anchors that separate the
# top candidates (pipeline/separating_anchors.hpp), checked with the real command on a tiny network:
#   1. a first `recommend` on an empty cache (the suite's real first run at the default budget,
#      FIRST_RUN, made by tests/cache/concurrent_first_run_test.sh) trains, besides the base anchor, the top candidates
#      it cannot tell apart, says so, refits, and answers with both top settings "measured" (or says
#      it skipped them, where a busy machine left no time for them: checked at any speed); the
#      anchors that decide fall back to the C++ trainer (no torchvision network), said and recorded;
#   1b. a close call between two measured settings that their runs cannot settle is trained
#      again, the two sides alternating, neither past 7 runs;
#   2. every setting labelled "measured" has a real step recorded in network.jsonl, and one whose
#      record is taken out of the measurements is no longer "measured" after a refit;
#   3. resumable: a run that has to redo the entry (coverage lost) trains no anchor it has again;
#   4. calibrate --anchor-settings anchors the settings asked for, and refuses bad text with a
#      one-line error and exit 2 before writing anything.
set -euo pipefail
dnntune=$1
source_dir=$2
network=$source_dir/tests/fixtures/tiny_network.json
first_run=$3
work=$(mktemp -d /tmp/dnntune-separating-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log; do echo "--- $log"; tail -20 "$log"; done >&2; exit 1; }
# The first run's answer and progress lines, and a copy of its cache (part 3 changes it).
[[ -s $first_run/first.log && -s $first_run/first.json ]] || fail "no first run in $first_run"
cp "$first_run/first.log" "$first_run/first.json" "$work/"
cp -r "$first_run/cache" "$work/cache"
export DNNTUNE_CACHE_DIR=$work/cache

# The (ppn, threads, batch) of every ok default-allocator iteration record in a network.jsonl.
anchored_settings() {
    python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    record = json.loads(line)
    if record["kind"] == "network" and record["pass"] == "iteration" and record["status"] == "ok" \
            and record.get("allocator", "default") == "default" and record["nodes"] == 1:
        print(f'{record["processes"]}x{record["threads"]}b{record["batch"]}')
PY
}

# 1. The first run separates its top candidates.
grep -q "anchor: training tiny_residual mb4 for real (2 threads)$" "$work/first.log" || fail "no base anchor"
# With what the stages leave, the base anchor again (pipeline/first_run.cpp): the C++ trainer's run, or
# its skipping said, or none where the close calls (before it) trained the base setting again already;
# Python's refused for a network torchvision does not build, or skipped for time.
grep -Eq "anchor: training tiny_residual mb4 for real \(2 threads\) again by the C\+\+ trainer|anchor of tiny_residual mb4 again by the C\+\+ trainer, in a process of its own skipped: it would take about|for real \(1x2\) again: its runs and" \
    "$work/first.log" || fail "the base anchor neither repeated nor said skipped"
grep -Eq "anchor of tiny_residual by PyTorch from Python skipped: the python runner trains torchvision's|anchor of tiny_residual mb4 by PyTorch from Python \(torchvision\), as users train skipped: it would take about" \
    "$work/first.log" || fail "Python's run of the base anchor neither refused nor said skipped"
# The tiny network is no torchvision network: the anchors that decide are the C++ trainer's, said at
# the start, and every run's record names that trainer (pipeline/first_run.cpp, deciding_runner).
grep -q "are trained by the C++ trainer: PyTorch from Python cannot train tiny_residual here" "$work/first.log" \
    || fail "the fallback to the C++ trainer for the deciding anchors was not said"
python3 - "$(ls "$DNNTUNE_CACHE_DIR"/*/measurements/network.jsonl)" <<'PY' || fail "a run not by the C++ trainer"
import json, sys
trainers = {json.loads(line).get("trainer") for line in open(sys.argv[1])
            if json.loads(line)["kind"] == "network" and json.loads(line)["pass"] == "iteration"}
assert trainers == {"dnntune"}, trainers
PY
# A separating anchor runs when the time left of the first run fits it: on a busy machine the
# earlier stages take longer, and the run says it skipped it. Checked at any speed: trained, refitted
# and both top settings measured, or said skipped (the plan's decisions on recorded costs and a clock
# of their own: tests/pipeline_first_run_plan_test.cpp).
entry=$(ls -d "$DNNTUNE_CACHE_DIR"/*/ | head -1)
entry=${entry%/}
records=$entry/measurements/network.jsonl
if grep -Eq "anchor: training tiny_residual mb4 for real \([0-9]+x[0-9]+\) (to separate it from|to check the top)" \
    "$work/first.log"; then
    grep -q "refitting with" "$work/first.log" || fail "no refit after the separating anchors"
    python3 - "$work/first.json" <<'PY' || fail "the top two settings are not both measured"
import json, sys
ranking = json.load(open(sys.argv[1]))["ranking"]
top = [(p["configuration"]["processes_per_node"], p["configuration"]["threads_per_process"], p["confidence"]) for p in ranking[:2]]
print("top two:", top)
assert len(top) == 2 and all(confidence == "measured" for *_, confidence in top), top
PY
    [[ $(anchored_settings "$records" | sort -u | wc -l) -ge 2 ]] || fail "fewer than two settings anchored"
    echo "ok: first run anchored $(anchored_settings "$records" | sort -u | tr '\n' ' ')and both top settings are measured"
else
    grep -Eq "anchor of tiny_residual mb4 at [0-9]+x[0-9]+ skipped: it would take about [0-9]+ s, past the anchor budget" \
        "$work/first.log" || fail "no separating anchor trained, and none said skipped"
    echo "ok: the separating anchor was said skipped (the time left of the first run did not fit it)"
fi

# 1b. A close call the runs cannot settle (pipeline/separating_anchors.hpp, run_close_call_anchor)
# is trained again after the refit, one run at a time, the two sides alternating (the older last
# run next) and neither past 7 runs. Whether the tiny network's top two lie within their runs'
# spread depends on the machine's noise (on a small VM they can be far apart and still within
# it): the invariants are checked whenever it happened.
if grep -q "again: its runs and" "$work/first.log"; then
    python3 - "$work/first.log" "$records" <<'PY' || fail "the close-call runs do not alternate or pass 7 runs"
import json, re, sys
trained = re.findall(r"for real \((\d+x\d+)\) again: its runs and (\d+x\d+)'s", open(sys.argv[1]).read())
runs = {}
for line in open(sys.argv[2]):
    record = json.loads(line)
    if record["kind"] == "network" and record["pass"] == "iteration" and record["status"] == "ok" \
            and record.get("allocator", "default") == "default":
        key = f'{record["processes"]}x{record["threads"]}'
        runs[key] = runs.get(key, 0) + 1
print("close-call runs:", trained, "runs per setting:", runs)
for (setting, other), (following, _) in zip(trained, trained[1:]):
    assert following != setting or runs.get(other, 0) >= 7, ("not alternating", setting, following)
for setting, _ in trained:
    assert runs[setting] <= 7, (setting, runs[setting])
PY
    grep -q "refitting with" "$work/first.log" || fail "no refit"
    echo "ok: the close call's sides were trained again, alternating, at most 7 runs each"
else
    echo "ok: no close call left after the separating anchors (nothing to train again)"
fi

# 2. "measured" only where a real step was recorded; taking one out takes the label away.
python3 - "$work/first.json" <(anchored_settings "$records") <<'PY' || fail "a measured setting has no anchor"
import json, sys
anchored = set(open(sys.argv[2]).read().split())
for p in json.load(open(sys.argv[1]))["ranking"]:
    c = p["configuration"]
    key = f'{c["processes_per_node"]}x{c["threads_per_process"]}b{c["batch_per_process"]}'
    assert p["confidence"] != "measured" or key in anchored, key
PY
cp -r "$entry/measurements" "$work/without"
python3 - "$work/without/network.jsonl" <<'PY'
import json, sys
path = sys.argv[1]
kept = [line for line in open(path) if not (json.loads(line)["processes"] == 2 and json.loads(line)["threads"] == 1)]
open(path, "w").writelines(kept)
PY
"$dnntune" fit "$work/without" --backend torch -o "$work/without.json" >/dev/null 2>"$work/fit.log" || fail "fit exited $?"
"$dnntune" predict --calibration "$work/without.json" --model "$network" --batch 4 --ppn 2 --threads 1 --json \
    >"$work/without-2x1.json" 2>"$work/predict.log" || fail "predict exited $?"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["confidence"]; assert c != "measured", c' \
    "$work/without-2x1.json" || fail "2x1 labelled measured without its anchor"
echo "ok: measured only where anchored"

# 3. Resumable: with its coverage lost the entry is redone from its records; no anchor it has is
# trained again. What it trains is a close call left unsettled within the first run's time (those
# runs are new ones), or a stage the first run said it skipped for time (on a busy machine).
# 60 s: room for the separating anchors' stage (what must not train again), less for new close calls.
cp "$records" "$work/records-before.jsonl"
rm "$entry/covered.json"
"$dnntune" recommend --model "$network" --batch 4 --calibration-budget 60 >"$work/again.out" 2>"$work/again.log" \
    || fail "second run exited $?"
grep -q "calibrating (once" "$work/again.log" || fail "the entry was not redone"
python3 - "$work/records-before.jsonl" "$records" "$work/first.log" "$work/again.log" <<'PY' || fail "an anchor was trained again"
import collections, json, re, sys
def runs(path):
    counted = collections.Counter()
    for line in open(path):
        r = json.loads(line)
        if r["kind"] == "network" and r["pass"] == "iteration" and r["status"] == "ok" and r["nodes"] == 1:
            counted[(r["processes"], r["threads"], r.get("allocator", "default"))] += 1
    return counted
before, after = runs(sys.argv[1]), runs(sys.argv[2])
first, again = open(sys.argv[3]).read(), open(sys.argv[4]).read().splitlines()
def setting(line):
    match = re.search(r"for real \((?:(\d+)x(\d+)|(\d+) threads?)\)(?: under (?:the )?([a-z-]+))?", line)
    processes, threads = (int(match[1]), int(match[2])) if match[1] else (1, int(match[3]))
    return processes, threads, match[4] or "default"
trained = [line for line in again if "anchor: training" in line]
print("trained again:", [line.split("for real ")[1] for line in trained] or "nothing")
for line in trained:
    key = setting(line)
    if "again: its runs and" in line:
        continue  # a close call's side, trained one run at a time
    if "again by the C++ trainer" in line:
        assert "again by the C++ trainer, in a process of its own skipped" in first, line
        continue  # the first run's repeat, skipped there for time
    assert before[key] == 0, ("trained again", line)
# Every new record is a run the redo announced: nothing trained unsaid.
added = sum((after - before).values())
assert added == len(trained), (added, len(trained))
PY
echo "ok: a resumed run trains no anchor again"

# 4. calibrate --anchor-settings.
for bad in "2y1" "0x1" "1x1," "" "64x64" "1x1 2x1"; do
    set +e; "$dnntune" calibrate --model "$network" --batch 4 --anchor-settings "$bad" -o "$work/bad" \
        >"$work/bad.out" 2>"$work/bad.log"; code=$?; set -e
    [[ $code -eq 2 ]] || fail "--anchor-settings '$bad' exited $code, expected 2"
    [[ $(wc -l <"$work/bad.log") -eq 1 ]] || fail "--anchor-settings '$bad': not a one-line error"
    [[ ! -e "$work/bad" ]] || fail "--anchor-settings '$bad' wrote $work/bad"
done
# The anchors are what is tested: the first run's probe and micro-runs resumed (nothing measured
# again), its anchors not copied, the allocator variants' given next to nothing.
mkdir "$work/asked"
cp "$entry/measurements/machine.json" "$entry/measurements/layers.jsonl" "$work/asked/"
"$dnntune" calibrate --model "$network" --batch 4 --backend torch --threads 2 --budget 10 --anchor-settings 1x1,2x1 \
    --allocator-budget 1 --resume -o "$work/asked" >"$work/asked.out" 2>"$work/asked.log" \
    || fail "calibrate --anchor-settings exited $?"
# (Read whole first: `grep -q` stops at the first match, and under pipefail the writer's broken pipe fails the test.)
asked_settings=$(anchored_settings "$work/asked/network.jsonl")
for setting in 1x2b4 1x1b4 2x1b4; do
    grep -qx "$setting" <<<"$asked_settings" || fail "calibrate did not anchor $setting"
done
echo "ok: calibrate --anchor-settings anchors what it is asked, refuses bad text"
