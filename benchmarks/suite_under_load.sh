#!/usr/bin/env bash
# benchmarks/suite_under_load.sh [CTEST ARGS...] — the test suite on a busy machine: ./run-tests
# (set-up, incremental build, ctest; CTEST ARGS go to ctest, e.g. -R cache or -L slow) with two busy
# loops beside it at the same priority, each wanting a whole core. A verdict must not depend on how
# fast or busy the machine is (issue 60): on a 2-core machine this halves what the suite gets, as a
# neighbour's job would. Also run as `DNNTUNE_UNDER_LOAD=1 ./run-tests [CTEST ARGS...]`.
# Prints the verdict (run-tests' exit code), the wall time, and the /tmp/dnntune-* entries before and
# after (a test leaves none behind); exits with run-tests' code.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
leftovers() { find /tmp -maxdepth 1 -name 'dnntune*' 2>/dev/null | wc -l; }

loops=()
stop_loops() {
    for pid in "${loops[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${loops[@]}"; do wait "$pid" 2>/dev/null; done
}
trap stop_loops EXIT
trap 'exit 130' INT TERM
for _ in 1 2; do
    (while :; do :; done) &
    loops+=("$!")
done

before=$(leftovers)
started=$(date +%s)
echo "suite_under_load: ./run-tests $* with busy loops ${loops[*]} beside it ($(nproc) hardware threads)"
DNNTUNE_UNDER_LOAD=0 "$root/run-tests" "$@"
code=$?
elapsed=$(($(date +%s) - started))
after=$(leftovers)
stop_loops
loops=()
verdict=$([[ $code == 0 ]] && echo passed || echo "FAILED (exit $code)")
echo "suite_under_load: $verdict in ${elapsed} s beside two busy loops; /tmp/dnntune* entries: $before before, $after after"
exit "$code"
