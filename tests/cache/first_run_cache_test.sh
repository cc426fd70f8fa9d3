#!/usr/bin/env bash
# tests/cache/first_run_cache_test.sh DNNTUNE SOURCE_DIR FIRST_RUN — the cached default calibration
# is safe under interruption and bad input, checked with the real command on a tiny network, on a
# copy of the cache the suite's real first run made (FIRST_RUN, by
# tests/cache/concurrent_first_run_test.sh, which checks three first runs at once on an empty cache):
#   1. bad options (batch out of range) are refused before the cache is touched: the entry's
#      files are byte-identical afterwards;
#   2. a garbled covered.json and a corrupt calibration are rebuilt, never fatal;
#   3. an entry whose records are gone and whose calibration is corrupt is rebuilt;
#   4. SIGTERM during a first run of a damaged entry (records gone, covered.json left), then SIGKILL
#      during the run that resumes it: the next run resumes what both recorded, measuring nothing
#      twice, never taking the killed run's partial records for a finished first run;
#   5. a bad measurement line is skipped and said; measurements without one readable record are
#      moved aside (kept), not deleted, and rebuilt from nothing (the probe too);
#   6. a first run that can measure nothing in its budget still answers, from the model alone.
set -euo pipefail
dnntune=$1
source_dir=$2
first_run=$3
network=$source_dir/tests/fixtures/tiny_network.json
work=$(mktemp -d /tmp/dnntune-cache-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log; do echo "--- $log"; tail -15 "$log"; done >&2; exit 1; }
# Small budgets: what is tested here is the cache's safety, not what a first run measures. The
# rebuilt runs are checked for an answer and for what they say, not for what they measure: 1 s (a
# run that measures nothing still answers, from the model: part 6). Two runs must reach their layer
# passes, 4 s: the one that rebuilds an entry without records (part 5 reads what it recorded) and
# the one that resumes killed runs (it says what was already recorded). A run to be killed is
# stopped at its first measured layer pass: 120 s, so that the plan's share for the layer passes
# outlasts the numerical check on a loaded machine.
budget=1
measuring_budget=4
killed_budget=120
recommend() { "$dnntune" recommend --model "$network" --batch 4 --calibration-budget "$budget" "$@"; }

duplicates() { python3 "$source_dir/tests/cache/duplicate_records.py" "$1"; }  # measurements recorded twice

# interrupted SIGNAL: a first run (or its resumption) ended by SIGNAL once it has recorded a layer
# pass (a measured progress line, so that there is something to resume; up to 5 minutes on a loaded
# machine).
interrupted() {
    local signal=$1 started=0
    "$dnntune" recommend --model "$network" --batch 4 --calibration-budget "$killed_budget" >"$work/$signal.out" \
        2>"$work/$signal.log" & pid=$!
    for _ in $(seq 1 3000); do
        grep -Eq "\[[0-9]+/[0-9]+\] .* ms \(cv" "$work/$signal.log" 2>/dev/null && { started=1; break; }
        sleep 0.1
    done
    kill -"$signal" "$pid"; wait "$pid" 2>/dev/null || true
    [[ $started -eq 1 ]] || fail "SIG$signal: the run measured no layer pass within 5 minutes"
}

export DNNTUNE_CACHE_DIR=$work/cache
[[ -d $first_run/cache ]] || fail "no first run in $first_run"
cp -r "$first_run/cache" "$DNNTUNE_CACHE_DIR"
entry=$(ls -d "$DNNTUNE_CACHE_DIR"/*/ | head -1)
entry=${entry%/}
profile=$work/machine.json
cp "$entry/measurements/machine.json" "$profile"

# 1. Bad input never touches the cache.
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

# 2. A garbled covered.json (the entry redone from its records) and a corrupt calibration.json
# (refitted): never fatal.
echo '{"covered": ["tiny@abc", "@4", 17, "x@99999999999999999999"]}' >"$entry/covered.json"
recommend >"$work/garbled.out" 2>"$work/garbled.log" || fail "garbled covered.json"
grep -q "Best for" "$work/garbled.out" || fail "no answer after a garbled covered.json"
echo '{"schema": "dnntune.calibration", "schema_ver' >"$entry/calibration.json"
recommend >"$work/corrupt.out" 2>"$work/corrupt.log" || fail "corrupt calibration.json"
grep -q "rebuilding" "$work/corrupt.log" || fail "corrupt calibration not reported as rebuilt"
echo "ok: garbled coverage and corrupt calibration rebuilt"

# 3. Records gone and calibration corrupt: rebuilt, not stuck. The probed machine.json stays (a first
# run keeps it and measures what the entry lacks); part 5 rebuilds without it.
rm "$entry/measurements/layers.jsonl" "$entry/measurements/network.jsonl"
echo 'garbage' >"$entry/calibration.json"
budget=$measuring_budget recommend >"$work/gone.out" 2>"$work/gone.log" || fail "entry without records not rebuilt"
grep -q "calibrating (once" "$work/gone.log" || fail "entry without records: no new calibration"
[[ -s $entry/measurements/layers.jsonl ]] || fail "entry without records: rebuilt without measuring a layer pass"
grep -q "Best for" "$work/gone.out" || fail "entry without records: no answer"
if grep -q "dnntune probe" "$work/gone.log"; then fail "the kept machine profile was measured again"; fi
echo "ok: an entry without records is rebuilt"

# 4. SIGTERM in the middle of a first run, SIGKILL in the middle of the run that resumes it, then a
# run that resumes what both recorded. The probe is not what is tested here: the entry starts with the
# machine profile measured above, so the kills land in the micro-runs. Its records are gone but its
# covered.json and a corrupt calibration are left (a damaged entry): a first run killed before its
# end must not be taken for a finished one and refitted from its partial records.
cache=$DNNTUNE_CACHE_DIR
export DNNTUNE_CACHE_DIR=$work/killed
killed=$DNNTUNE_CACHE_DIR/$(basename "$entry")
mkdir -p "$killed/measurements" && cp "$profile" "$killed/measurements/"
cp "$entry/covered.json" "$killed/" && echo garbage >"$killed/calibration.json"
interrupted TERM
grep -q "calibrating (once" "$work/TERM.log" || fail "SIGTERM: the first run did not start"
interrupted KILL
grep -q "already recorded" "$work/KILL.log" || fail "the run after SIGTERM did not resume"
if grep -q "rebuilding it from its measurements" "$work/KILL.log"; then
    fail "the run after SIGTERM took the killed first run's partial records for a finished one"
fi
budget=$measuring_budget recommend >"$work/resumed.out" 2>"$work/resumed.log" || fail "run after SIGKILL"
grep -q "Best for" "$work/resumed.out" || fail "no answer after SIGKILL"
grep -q "already recorded" "$work/resumed.log" || fail "the run after SIGKILL did not resume"
if grep -q "dnntune probe" "$work/TERM.log" "$work/KILL.log" "$work/resumed.log"; then
    fail "the seeded machine profile was measured again"
fi
[[ $(duplicates "$killed/measurements/layers.jsonl") -eq 0 ]] || fail "the runs after SIGTERM and SIGKILL measured twice"
echo "ok: a run ended by SIGTERM and its resumption ended by SIGKILL are resumed, nothing measured twice"
export DNNTUNE_CACHE_DIR=$cache

# 5. One bad line among good records is skipped and said: the measurements are kept and refitted.
bad_line=$(($(wc -l <"$entry/measurements/layers.jsonl") + 1))
echo '{"schema": "dnntune.measurement", "schema_version": 99}' >>"$entry/measurements/layers.jsonl"
echo garbage >"$entry/calibration.json"
recommend >"$work/skipped.out" 2>"$work/skipped.log" || fail "a bad measurement line stopped the run"
grep -q "skipped a bad measurement line: .*layers.jsonl:$bad_line:" "$work/skipped.log" || fail "the bad line was not said"
if ls -d "$entry"/measurements.unusable-* >/dev/null 2>&1; then fail "one bad line moved the measurements aside"; fi
echo "ok: a bad measurement line skipped and said, the measurements kept"

# 5b. Measurements without one readable record are moved aside and rebuilt from nothing, the probe
# included.
echo '{"schema": "dnntune.measurement", "schema_version": 99}' >"$entry/measurements/layers.jsonl"
echo garbage >"$entry/calibration.json"
recommend >"$work/aside.out" 2>"$work/aside.log" || fail "unreadable measurements not rebuilt"
ls -d "$entry"/measurements.unusable-* >/dev/null 2>&1 || fail "unreadable measurements were not kept aside"
grep -q "dnntune probe" "$work/aside.log" || fail "the rebuild from nothing did not probe the machine"
echo "ok: unreadable measurements kept aside and rebuilt"

# 6. Nothing measured within the budget: an answer from the model alone, said in a note. The probe
# is not what is tested here: the entry starts with the machine profile measured above.
export DNNTUNE_CACHE_DIR=$work/unmeasured
mkdir -p "$DNNTUNE_CACHE_DIR/$(basename "$entry")/measurements"
cp "$profile" "$DNNTUNE_CACHE_DIR/$(basename "$entry")/measurements/"
"$dnntune" recommend --model "$network" --batch 4 --calibration-budget 0.001 >"$work/unmeasured.out" 2>"$work/unmeasured.log" || fail "no answer without measurements"
grep -q "Best for" "$work/unmeasured.out" || fail "no answer without measurements"
grep -q "note: no layer could be measured" "$work/unmeasured.log" || fail "the model-only answer is not said"
echo "ok: a run that measured nothing answers from the model"
