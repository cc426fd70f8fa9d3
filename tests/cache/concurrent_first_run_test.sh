#!/usr/bin/env bash
# tests/cache/concurrent_first_run_test.sh DNNTUNE SOURCE_DIR OUT — a user's first `recommend`,
# for real: the tiny network at the default budget on an empty cache, started three times at once:
#   1. all three answer; one calibrates and announces its work with its estimate first; the others
#      wait for its lock and answer from what it made; no measurement is recorded twice.
# The suite's one real default first run: it leaves in OUT (a folder of the build tree, remade at
# each run) the cache, the calibrating run's progress lines (first.log) and answer (first.json), for
# the tests of what a first run does (ctest's fixture `first_run`: tests/cache/first_run_plan_test.sh,
# separating_anchor_test.sh, first_run_cache_test.sh), which copy what they change.
set -euo pipefail
dnntune=$1
source_dir=$2
out=$3
network=$source_dir/tests/fixtures/tiny_network.json
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAILED: $*" >&2; for log in "$out"/*.log; do echo "--- $log"; tail -15 "$log"; done >&2; exit 1; }
export DNNTUNE_CACHE_DIR=$out/cache

duplicates() { python3 "$source_dir/tests/cache/duplicate_records.py" "$1"; }  # measurements recorded twice

for run in 1 2 3; do
    "$dnntune" recommend --model "$network" --batch 4 --format json --explain >"$out/run$run.json" 2>"$out/run$run.log" &
    pids[$run]=$!
done
for run in 1 2 3; do wait "${pids[$run]}" || fail "concurrent run $run exited $?"; done
# An answer: a figure, or "unknown" where a busy machine's runs spread the band past the gate's
# ratio (model/plausibility.hpp): the cache is what is tested here, not the figure.
for run in 1 2 3; do
    python3 -c 'import json, sys; best = json.load(open(sys.argv[1]))["best"]; figure = best["images_per_second"]
assert (figure > 0) if figure is not None else not best["band"]["known"], best' "$out/run$run.json" \
        || fail "run $run printed no answer"
done
calibrating=$(grep -l "calibrating (once" "$out"/run?.log || true)
[[ $(wc -w <<<"$calibrating") -eq 1 ]] || fail "runs that calibrated: '$calibrating', expected one"
waited=$(grep -l "waiting for process" "$out"/run?.log | wc -l)
[[ $waited -ge 1 ]] || fail "no run waited for the lock"
# The work announced with its estimate before it starts (pipeline/default_calibration.hpp).
grep -q "calibrating 1 new batch (about " "$calibrating" || fail "the first run did not announce its work"
entry=$(ls -d "$DNNTUNE_CACHE_DIR"/*/ | head -1)
[[ $(duplicates "${entry%/}/measurements/layers.jsonl") -eq 0 ]] || fail "layer passes recorded twice"
cp "$calibrating" "$out/first.log"
cp "${calibrating%.log}.json" "$out/first.json"
echo "ok: 3 concurrent runs, $(basename "$calibrating" .log) calibrated, $waited waited, no layer pass measured twice"
