#!/usr/bin/env bash
# tests/scheduler/slurm_submission_test.sh DNNTUNE SOURCE_DIR — what `calibrate --slurm --no-wait`
# submits and prints, against stand-ins for sinfo and sbatch (no scheduler, no root, fast; the real
# round trip is slurm_calibration_test.sh): the job script runs the node's calibration with the
# request's words, the printed commands are quoted as the scripts quote words (a network path with
# a space), and a cache directory holding '%' (which SLURM expands in #SBATCH --output) is refused
# before anything is submitted.
set -euo pipefail
dnntune=$1
source_dir=$2

work=$(mktemp -d /tmp/dnntune-slurm-submission-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

# sinfo lists one node; sbatch keeps the script it was given and answers a job id.
mkdir -p "$work/bin"
cat >"$work/bin/sinfo" <<'EOF'
#!/bin/sh
echo node1
EOF
cat >"$work/bin/sbatch" <<EOF
#!/bin/sh
for word in "\$@"; do script=\$word; done
cp "\$script" "$work/submitted.sbatch"
echo 4242
EOF
chmod +x "$work/bin/sinfo" "$work/bin/sbatch"
export PATH=$work/bin:$PATH

mkdir -p "$work/networks with space"
network="$work/networks with space/tiny network.json"
cp "$source_dir/tests/fixtures/tiny_network.json" "$network"

# 1. '%' in the cache directory: refused (exit 2, one line naming it), nothing submitted.
status=0
DNNTUNE_CACHE_DIR="$work/cache%j" "$dnntune" calibrate --slurm --no-wait --partition test --model "$network" \
    >"$work/percent.out" 2>"$work/percent.err" || status=$?
[[ $status -eq 2 ]] || fail "a cache directory with % exited $status, expected 2: $(cat "$work/percent.err")"
[[ $(wc -l <"$work/percent.err") -eq 1 ]] || fail "expected a one-line error, got: $(cat "$work/percent.err")"
grep -q "'%'" "$work/percent.err" || fail "the error does not name the '%': $(cat "$work/percent.err")"
[[ ! -e $work/submitted.sbatch ]] || fail "a refused cache directory still submitted a job"

# 2. Submitted: the printed commands read back word for word.
export DNNTUNE_CACHE_DIR=$work/cache
"$dnntune" calibrate --slurm --no-wait --partition test --model "$network" --batch 4 --budget 20 \
    >"$work/no-wait.out" 2>"$work/no-wait.err" || fail "calibrate --slurm --no-wait: $(cat "$work/no-wait.err")"
cat "$work/no-wait.out"
grep -q "^Submitted SLURM job 4242 to calibrate a node of test" "$work/no-wait.out" || fail "the job is not named"
use=$(sed -n 's/^When it has finished: //p' "$work/no-wait.out")
[[ -n $use ]] || fail "--no-wait did not say how to use the result"
eval "words=($use)"
expected=(dnntune recommend --partition test --model "$network")
[[ "${words[*]}" == "${expected[*]}" && ${#words[@]} -eq ${#expected[@]} ]] \
    || fail "the printed command reads back as ${#words[@]} words: ${words[*]}"

# 3. The job script: its log in the cache, and the node's calibration with the request's words.
script=$work/submitted.sbatch
[[ -f $script ]] || fail "nothing was submitted"
grep -q "^#SBATCH --output=$work/cache/slurm/jobs/calibrate-test-" "$script" || fail "the log is not in the cache: $(cat "$script")"
line=$(sed -n 's/^exec //p' "$script")
eval "job=($line)"
[[ ${job[0]} == /* && ${job[1]} == calibrate && ${job[2]} == --slurm-node-job ]] || fail "the job runs: $line"
printf '%s\n' "${job[@]}" >"$work/job-words"
for expected_pair in "--partition test" "--backend torch" "--budget 20" "--model $network" "--batch 4"; do
    option=${expected_pair%% *}
    value=${expected_pair#* }
    grep -A1 -x -- "$option" "$work/job-words" | tail -1 | grep -qxF -- "$value" \
        || fail "the job's $option is not $value: $line"
done
echo "PASS"
