#!/usr/bin/env bash
# benchmarks/spec_answer_figures.sh [DNNTUNE] [BEFORE_DNNTUNE] — the spec answer's figures for
# resnet50 and resnet152 on the study's CPUs (skylake-8180, broadwell-e5-2680v4, epyc-7551,
# cascadelake-8280): the best configuration, multi- over single-process (the pick's, and the
# best any multi-process layout reaches), the SMT gain (best SMT-on layout over best SMT-off), the
# pick's band (high / low), whether the pick is the model's or the tie-break's, and the seconds
# the answer took (median, min-max of 3). With BEFORE_DNNTUNE (e.g. a build of main), the same
# figures from it, row for row. The study (Jain et al., CLUSTER 2019) measured multi-process up
# to 1.47x single-process for ResNet-152 on Skylake-8180.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
after=${1:-$here/build/cli/dnntune}
before=${2:-}
python=/usr/bin/python3
work=$(mktemp -d /tmp/dnntune-spec-figures-XXXXXX)
trap 'rm -rf "$work"' EXIT

figures() {  # figures LABEL DNNTUNE
    local label=$1 dnntune=$2
    for machine in skylake-8180 broadwell-e5-2680v4 epyc-7551 cascadelake-8280; do
        for model in resnet50 resnet152; do
            local times=()
            for run in 1 2 3; do
                local start end
                start=$(date +%s.%N)
                "$dnntune" recommend --model "$model" --machine "$machine" --json --explain >"$work/$label-$machine-$model.json"
                end=$(date +%s.%N)
                times+=("$(echo "$end - $start" | bc)")
            done
            "$python" - "$label" "$machine" "$model" "$work/$label-$machine-$model.json" "${times[@]}" <<'PY'
import json, statistics, sys
label, machine, model, path, *times = sys.argv[1:]
r = json.load(open(path))
best, ranking = r["best"], r["ranking"]
def ips(p): return p["images_per_second"]
def cfg(p):
    c = p["configuration"]
    return f'{c["processes_per_node"]}x{c["threads_per_process"]}{" SMT" if c["smt"] else ""}'
single = r["single_process"]
multi = max((p for p in ranking if p["configuration"]["processes_per_node"] > 1), key=ips)
smt_on = max((p for p in ranking if p["configuration"]["smt"]), key=ips, default=None)
smt_off = max((p for p in ranking if not p["configuration"]["smt"]), key=ips)
if "chosen_by" in r:
    pick = r["chosen_by"] + f' ({r["tied_candidates"]} tied)'
else:  # before: the tie-break replaced the top score, or the top score stood (tied or not)
    pick = "tie-break" if cfg(best) != cfg(ranking[0]) else ("model (band overlap)" if r["tied_within_band"] else "model")
band = best["band"]
times = sorted(float(t) for t in times)
print(f'{label:6} {machine:20} {model:9} {cfg(best):12} {ips(best):7.1f} {r["speedup_over_single_process"]:5.2f} '
      f'{ips(multi)/ips(single):5.2f} ({cfg(multi):10}) {(ips(smt_on)/ips(smt_off) if smt_on else float("nan")):5.2f} '
      f'{band["high"]/band["low"]:5.2f} {pick:22} {statistics.median(times):5.2f} ({times[0]:.2f}-{times[-1]:.2f})')
PY
        done
    done
}

printf '%-6s %-20s %-9s %-12s %7s %5s %18s %5s %5s %-22s %s\n' "" machine model best "img/s" "MP/SP" \
    "best MP/SP (layout)" SMT "band" pick "seconds"
[[ -n $before ]] && figures before "$before"
figures after "$after"
echo "band: the pick's 90% band, high/low. MP/SP: the pick over 1 process x all cores. SMT: best SMT-on over best SMT-off."
echo "study (Jain et al., CLUSTER 2019): multi-process up to 1.47x single-process, ResNet-152, Skylake-8180."
