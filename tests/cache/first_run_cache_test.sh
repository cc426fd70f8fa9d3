#!/usr/bin/env bash
# tests/cache/first_run_cache_test.sh DNNTUNE SOURCE_DIR — the cached default calibration is safe
# under concurrency, interruption and bad input, checked with the real command on a tiny network:
#   1. three `recommend` started at once on an empty cache: all answer, one calibrates, the others
#      wait for its lock; no measurement is recorded twice;
#   2. bad options (batch out of range) are refused before the cache is touched: the entry's
#      files are byte-identical afterwards;
#   3. a garbled covered.json and a corrupt calibration are rebuilt, never fatal;
#   4. an entry whose measurements are gone and whose calibration is corrupt is rebuilt;
#   5. SIGTERM or SIGKILL during the first calibration: the next run resumes what was recorded;
#   6. a bad measurement line is skipped and said; measurements without one readable record are
#      moved aside (kept), not deleted, and rebuilt;
#   7. a first run that can measure nothing in its budget still answers, from the model alone.
set -euo pipefail
dnntune=$1
source_dir=$2
network=$source_dir/tests/fixtures/tiny_network.json
work=$(mktemp -d /tmp/dnntune-cache-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log; do echo "--- $log"; tail -15 "$log"; done >&2; exit 1; }
# Small budgets: what is tested here is the cache's safety, not what a first run measures (the
# default budget's close calls repeat anchors for minutes, in each of the five full first runs).
# 45 s for the three concurrent runs (the probe, the layer passes and the base anchor under one
# lock), 30 s after them (the probe and the layer passes: what is rebuilt, resumed or skipped).
budget=45
recommend() { "$dnntune" recommend --model "$network" --batch 4 --calibration-budget "$budget" "$@"; }

# Duplicate measurements: the same record key (kind, backend, network, descriptor, pass, batch,
# setting) twice among the records that are not `skipped`.
duplicates() {
    python3 - "$1" <<'PY'
import json, sys, collections
keys = collections.Counter()
for line in open(sys.argv[1]):
    record = json.loads(line)
    if record["status"] == "skipped":
        continue
    keys[tuple(str(record[k]) for k in ("kind", "backend", "network", "descriptor", "pass", "batch", "threads", "smt", "processes"))] += 1
print(sum(count - 1 for count in keys.values()))
PY
}

# 1. Three at once on an empty cache.
export DNNTUNE_CACHE_DIR=$work/cache
for run in 1 2 3; do recommend --format json >"$work/run$run.out" 2>"$work/run$run.log" & pids[$run]=$!; done
for run in 1 2 3; do wait "${pids[$run]}" || fail "concurrent run $run exited $?"; done
for run in 1 2 3; do python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["best"]["images_per_second"] > 0' \
    "$work/run$run.out" || fail "run $run printed no answer"; done
calibrated=$(grep -l "calibrating (once" "$work"/run?.log | wc -l)
waited=$(grep -l "waiting for process" "$work"/run?.log | wc -l)
[[ $calibrated -eq 1 ]] || fail "$calibrated runs calibrated, expected 1"
[[ $waited -ge 1 ]] || fail "no run waited for the lock"
entry=$(ls -d "$DNNTUNE_CACHE_DIR"/*/ | head -1)
entry=${entry%/}
[[ $(duplicates "$entry/measurements/layers.jsonl") -eq 0 ]] || fail "measurements recorded twice"
echo "ok: 3 concurrent runs, 1 calibrated, $waited waited, no duplicate measurement"
budget=30

# 2. Bad input never touches the cache.
snapshot() { (cd "$entry" && find . -type f ! -name '*.lock' -print0 | sort -z | xargs -0 sha256sum); }
before=$(snapshot)
for bad in "--batch 0" "--batch -3" "--batch 70000" "--batch abc"; do
    # shellcheck disable=SC2086
    set +e; "$dnntune" predict --model "$network" $bad >"$work/bad.out" 2>"$work/bad.log"; code=$?; set -e
    [[ $code -eq 2 ]] || fail "predict $bad exited $code, expected 2"
    [[ $(wc -l <"$work/bad.log") -eq 1 ]] || fail "predict $bad: not a one-line error"
done
set +e; "$dnntune" validate --model "$network" --batch 70000 >"$work/bad.out" 2>"$work/bad.log"; code=$?; set -e
[[ $code -eq 2 ]] || fail "validate --batch 70000 exited $code, expected 2"
[[ "$(snapshot)" == "$before" ]] || fail "bad input changed the cache entry"
echo "ok: bad batches refused, cache entry unchanged"

# 3. A garbled covered.json and a corrupt calibration.json: rebuilt, never fatal.
echo '{"covered": ["tiny@abc", "@4", 17, "x@99999999999999999999"]}' >"$entry/covered.json"
recommend >"$work/garbled.out" 2>"$work/garbled.log" || fail "garbled covered.json"
echo '{"schema": "dnntune.calibration", "schema_ver' >"$entry/calibration.json"
recommend >"$work/corrupt.out" 2>"$work/corrupt.log" || fail "corrupt calibration.json"
grep -q "rebuilding" "$work/corrupt.log" || fail "corrupt calibration not reported as rebuilt"
echo "ok: garbled coverage and corrupt calibration rebuilt"

# 4. Measurements gone and calibration corrupt: rebuilt, not stuck.
rm -rf "$entry/measurements"
echo 'garbage' >"$entry/calibration.json"
recommend >"$work/gone.out" 2>"$work/gone.log" || fail "entry without measurements not rebuilt"
grep -q "calibrating (once" "$work/gone.log" || fail "entry without measurements: no new calibration"
echo "ok: an entry without measurements is rebuilt"

# 5. SIGTERM or SIGKILL in the middle of the first calibration, then resume. The probe is not what is
# tested here: each new entry starts with the machine profile the entry above measured (a first run
# measures what its entry lacks), so the kill lands in the micro-runs, not 20 s of probe later.
profile=$entry/measurements/machine.json
[[ -s "$profile" ]] || fail "the rebuilt entry has no machine profile"
for signal in TERM KILL; do
    export DNNTUNE_CACHE_DIR=$work/killed-$signal
    seeded=$DNNTUNE_CACHE_DIR/$(basename "$entry")/measurements
    mkdir -p "$seeded" && cp "$profile" "$seeded/"
    "$dnntune" recommend --model "$network" --batch 4 --calibration-budget "$budget" >"$work/killed.out" 2>"$work/killed.log" & pid=$!
    # Killed once a layer pass has been recorded (a progress line), so there is something to
    # resume; up to 5 minutes on a loaded machine.
    started=0
    for _ in $(seq 1 3000); do
        grep -q "\[[0-9]*/[0-9]*\]" "$work/killed.log" 2>/dev/null && { started=1; break; }
        sleep 0.1
    done
    kill -"$signal" "$pid"; wait "$pid" 2>/dev/null || true
    [[ $started -eq 1 ]] || fail "SIG$signal: the first run measured no layer pass within 5 minutes"
    recommend >"$work/resumed.out" 2>"$work/resumed.log" || fail "run after SIG$signal"
    grep -q "Best for" "$work/resumed.out" || fail "no answer after SIG$signal"
    grep -q "already recorded" "$work/resumed.log" || fail "the run after SIG$signal did not resume"
    if grep -q "dnntune probe" "$work/killed.log"; then fail "SIG$signal: the seeded machine profile was measured again"; fi
    entry=$(ls -d "$DNNTUNE_CACHE_DIR"/*/ | head -1)
    [[ $(duplicates "${entry%/}/measurements/layers.jsonl") -eq 0 ]] || fail "the run after SIG$signal measured twice"
    echo "ok: a run ended by SIG$signal is resumed"
done

# 6. One bad line among good records is skipped and said: the measurements are kept and refitted.
entry=${entry%/}
bad_line=$(($(wc -l <"$entry/measurements/layers.jsonl") + 1))
echo '{"schema": "dnntune.measurement", "schema_version": 99}' >>"$entry/measurements/layers.jsonl"
echo garbage >"$entry/calibration.json"
recommend >"$work/skipped.out" 2>"$work/skipped.log" || fail "a bad measurement line stopped the run"
grep -q "skipped a bad measurement line: .*layers.jsonl:$bad_line:" "$work/skipped.log" || fail "the bad line was not said"
if ls -d "$entry"/measurements.unusable-* >/dev/null 2>&1; then fail "one bad line moved the measurements aside"; fi
echo "ok: a bad measurement line skipped and said, the measurements kept"

# 6b. Measurements without one readable record are moved aside and rebuilt.
echo '{"schema": "dnntune.measurement", "schema_version": 99}' >"$entry/measurements/layers.jsonl"
echo garbage >"$entry/calibration.json"
recommend >"$work/aside.out" 2>"$work/aside.log" || fail "unreadable measurements not rebuilt"
ls -d "$entry"/measurements.unusable-* >/dev/null 2>&1 || fail "unreadable measurements were not kept aside"
echo "ok: unreadable measurements kept aside and rebuilt"

# 7. Nothing measured within the budget: an answer from the model alone, said in a note.
export DNNTUNE_CACHE_DIR=$work/unmeasured
"$dnntune" recommend --model "$network" --batch 4 --calibration-budget 0.001 >"$work/unmeasured.out" 2>"$work/unmeasured.log" || fail "no answer without measurements"
grep -q "Best for" "$work/unmeasured.out" || fail "no answer without measurements"
grep -q "note: no layer could be measured" "$work/unmeasured.log" || fail "the model-only answer is not said"
echo "ok: a run that measured nothing answers from the model"
