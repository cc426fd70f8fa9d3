#!/usr/bin/env bash
# tests/launch/allocator_ranks_test.sh DNNTUNE SOURCE_DIR — every rank of a launch dnntune emits
# or runs really runs under the chosen memory allocator, checked from outside in each running
# rank's /proc/PID/environ (LD_PRELOAD, glibc's MALLOC_*) and /proc/PID/maps (the preloaded
# library mapped):
#   1. recommend's own choice (a calibration whose allocation term measured a variant faster than
#      glibc's defaults) reaches every rank of its mpirun line, and of its torchrun line when
#      python3-torch is installed;
#   2. --allocator default wins over that choice: no rank preloads anything;
#   3. `dnntune train --launch --allocator NAME`, for every variant installed here.
set -euo pipefail
dnntune=$1
source_dir=$2
work=$(mktemp -d /tmp/dnntune-allocator-XXXXXX)
launched=()  # the launches this test started, by process id
cleanup() {
    for out in "$work"/out-*; do [[ -d $out ]] && touch "$out/release"; done
    for pid in "${launched[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
# torchrun's agent leaves a torchelastic_* folder in the temporary directory: this test's own.
mkdir "$work/tmp"
export TMPDIR=$work/tmp
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log; do echo "--- $log"; tail -20 "$log"; done >&2; exit 1; }
export DNNTUNE_CACHE_DIR=$work/cache OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
network=$source_dir/tests/fixtures/tiny_network.json
rank_script=$source_dir/tests/launch/allocator_rank.py

# The variants installed here, "NAME VAR=VALUE...", from probe's one list of them.
mapfile -t variants < <("$dnntune" probe --quick | awk '
  /^Allocators/ { on = 1; next }
  on && /^  [a-z]/ { how = ""; if (index($0, "; load with ")) how = substr($0, index($0, "; load with ") + 12); print $1, how; next }
  on { on = 0 }')
((${#variants[@]} >= 2)) || fail "probe lists fewer than glibc's two allocator variants"
settings_of() { for variant in "${variants[@]}"; do [[ ${variant%% *} == "$1" ]] && { echo "${variant#"$1"}"; return; }; done; }

# runs_under PID SETTING...: every VAR=VALUE is in the process's environment, and a preloaded
# library is mapped in it.
runs_under() {
    local pid=$1 setting
    shift
    local environment
    environment=$(tr '\0' '\n' <"/proc/$pid/environ")
    for setting in "$@"; do
        grep -qxF -- "$setting" <<<"$environment" || { echo "pid $pid lacks $setting"; return 1; }
        if [[ $setting == LD_PRELOAD=* ]] && ! grep -qF -- "${setting#LD_PRELOAD=}" "/proc/$pid/maps"; then
            echo "pid $pid does not map ${setting#LD_PRELOAD=}"
            return 1
        fi
    done
}
runs_default() {
    if grep -qE 'jemalloc|tcmalloc' "/proc/$1/maps" || tr '\0' '\n' <"/proc/$1/environ" | grep -q '^MALLOC_MMAP_THRESHOLD_='; then
        echo "pid $1 runs under another allocator"
        return 1
    fi
}

# launch_and_check NAME SCRIPT CHECK [SETTING...]: runs SCRIPT (a launch of allocator_rank.py
# into $work/out-NAME), waits for its 2 ranks, runs CHECK PID SETTING... on each while they run,
# then releases them.
launch_and_check() {
    local name=$1 script=$2 check=$3 out=$work/out-$1
    shift 3
    mkdir -p "$out"
    timeout 150 bash "$script" >"$work/$name.log" 2>&1 &
    local job=$!
    launched+=("$job")
    for _ in $(seq 600); do
        [[ $(find "$out" -name 'rank*.pid' | wc -l) -ge 2 ]] && break
        kill -0 "$job" 2>/dev/null || break
        sleep 0.1
    done
    [[ $(find "$out" -name 'rank*.pid' | wc -l) -eq 2 ]] || fail "$name: 2 ranks did not start"
    for pid_file in "$out"/rank*.pid; do
        "$check" "$(cat "$pid_file")" "$@" || fail "$name: $(basename "$pid_file" .pid) is not under the expected allocator"
    done
    touch "$out/release"
    wait "$job" || fail "$name: the launch failed"
    echo "ok: $name: both ranks checked in /proc/PID/environ and /proc/PID/maps"
}

# 1. A calibration whose allocator term measured every installed variant: the last one
# (tcmalloc when installed) fastest, glibc's defaults slowest, each with a narrow band.
"$dnntune" fit "$source_dir/tests/fixtures/anchored_resnet18_calibration" -o "$work/fitted.json" --bootstrap 4 \
    >"$work/fit.log" 2>&1 || fail "fit"
/usr/bin/python3 - "$work/fitted.json" "$work/calibration.json" "${variants[@]%% *}" <<'PY'
import json, sys
calibration = json.load(open(sys.argv[1]))
names = sys.argv[3:]
variants = [{"name": "glibc-tuned", "non_reuse": 0, "low": 0, "high": 0, "anchors": 1},
            {"name": "default", "non_reuse": 1, "low": 0.95, "high": 1.05, "anchors": 1}]
others = [name for name in names if name not in ("default", "glibc-tuned")]
for index, name in enumerate(others):
    value = -0.2 * (index + 1)
    variants.append({"name": name, "non_reuse": value, "low": value - 0.05, "high": value + 0.05, "anchors": 1})
calibration["allocation"] = {"fault_ns_per_page": 4096, "fault_ns_per_page_all_cores": 8192, "variants": variants}
json.dump(calibration, open(sys.argv[2], "w"))
PY
recommend=("$dnntune" recommend --model "$network" --batch 4 --ppn 2 --no-smt --calibration "$work/calibration.json")
"${recommend[@]}" --json >"$work/recommendation.json" 2>"$work/recommend.log" || fail "recommend --json"
chosen=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["allocator"]["chosen"])' \
    "$work/recommendation.json")
[[ $chosen != default ]] || fail "recommend kept glibc's defaults although a variant was measured faster"
read -ra chosen_settings <<<"$(settings_of "$chosen")"
echo "recommended allocator: $chosen (${chosen_settings[*]})"

"${recommend[@]}" --format mpirun -- /usr/bin/python3 "$rank_script" "$work/out-mpirun" >"$work/mpirun.sh" \
    2>>"$work/recommend.log" || fail "recommend --format mpirun"
MASTER_PORT=29621 launch_and_check mpirun "$work/mpirun.sh" runs_under "${chosen_settings[@]}"

if /usr/bin/python3 "$source_dir/tests/python/has_modules.py" torch; then
    "${recommend[@]}" --format torchrun -- /usr/bin/python3 "$rank_script" "$work/out-torchrun" >"$work/torchrun.sh" \
        2>>"$work/recommend.log" || fail "recommend --format torchrun"
    # Debian's torchrun cannot start under Python 3.11 (torchrun_shim.py): the shim runs in its place.
    sed -i "s|^torchrun |/usr/bin/python3 $source_dir/tests/launch/torchrun_shim.py |" "$work/torchrun.sh"
    MASTER_PORT=29622 launch_and_check torchrun "$work/torchrun.sh" runs_under "${chosen_settings[@]}"
else
    echo "torchrun: skipped (no python3-torch)"
fi

# 2. The user's --allocator wins.
"${recommend[@]}" --format mpirun --allocator default -- /usr/bin/python3 "$rank_script" "$work/out-mpirun-default" \
    >"$work/mpirun-default.sh" 2>>"$work/recommend.log" || fail "recommend --format mpirun --allocator default"
MASTER_PORT=29623 launch_and_check mpirun-default "$work/mpirun-default.sh" runs_default

# 3. train --launch: each rank re-executes itself under the variant before MPI starts; seen here
# by its command line (the record file names the run) once DNNTUNE_ALLOCATOR marks the re-exec.
for variant in "${variants[@]}"; do
    name=${variant%% *}
    [[ $name == default ]] && continue
    read -ra settings <<<"$(settings_of "$name")"
    record=$work/train-$name.jsonl
    "$dnntune" train --launch --ppn 2 --threads 1 --model "$network" --batch 4 --iters 1500 --warmup 0 \
        --allocator "$name" --record "$record" --output /dev/null >"$work/train-$name.log" 2>&1 &
    job=$!
    launched+=("$job")
    seen=()
    while kill -0 "$job" 2>/dev/null && ((${#seen[@]} < 2)); do
        # The processes naming this run's record file: the launcher, mpirun and the ranks.
        for pid in $(pgrep -f -- "$record"); do
            words=$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null) || continue  # gone meanwhile
            [[ $words == *" train "*"$record"* && $words != *--launch* && $words != *mpirun* ]] || continue
            tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "DNNTUNE_ALLOCATOR=$name" || continue
            [[ " ${seen[*]} " == *" $pid "* ]] && continue
            if ! runs_under "$pid" "${settings[@]}"; then
                [[ -e /proc/$pid ]] && fail "train --launch --allocator $name: rank $pid"
                continue  # it ended while being read
            fi
            seen+=("$pid")
        done
        sleep 0.05
    done
    wait "$job" || fail "train --launch --allocator $name"
    ((${#seen[@]} == 2)) || fail "train --launch --allocator $name: saw ${#seen[@]} of 2 ranks running under it"
    grep -q "\"allocator\":\"$name\"" "$record" || fail "train --launch --allocator $name: its records do not say so"
    echo "ok: train --launch --allocator $name: ranks ${seen[*]} checked in /proc/PID/environ and /proc/PID/maps"
done
