#!/usr/bin/env bash
# benchmarks/first_answer_figures.sh [--cases LIST] [--configs LIST] [--allocators LIST] [--repeats N]
#                                    [--pairs N] [--dnntune PATH] [--before PATH] [--calibration-budget S]
#                                    [--directory DIR] — is the
# first answer the best setup (issues 41 and 62)? For each case MODEL:BATCH (default resnet18:8,resnet50:16,inception_v3:32,resnet152:32):
#   1. `recommend --model MODEL --batch BATCH --json` from an EMPTY cache: the first run's wall time,
#      what it announced at its start, what it measured and skipped (its progress lines), and the
#      answer: layout (processes x threads) and allocator, with the allocator's basis;
#   2. images/s measured by PyTorch from Python (`train --runner python`: torchvision's network,
#      DistributedDataParallel over gloo for several ranks) under each allocator variant installed
#      here (`dnntune probe` lists them) at each layout of --configs (default 1x2,2x1): the same
#      allocator environment the answer's launch line sets (probe's one list of variants;
#      --allocators keeps some: a cell of a variant that runs several times slower takes minutes);
#   3. the recommended setup's measured images/s against the best measured: target within 5%; and
#      the model's images/s (`predict` from the first run's cache) against PyTorch's at each layout,
#      under the answer's allocator;
#   4. where the grid's best is another setup, --pairs N (default 3) alternating runs of the two,
#      the answer's first, and the median of the N ratios: one run a cell moves 10-50% between
#      grids on a shared 2-core VM (docs/results.md), so the grid's best is partly its draw, and a
#      ratio of runs a minute apart sees the same state of the machine. The verdict is the paired
#      ratio's where there is one.
# Each run is a warm-up step and timed steps (their median): three, or as many as take about 10 s
# at the first run's base anchor step (resnet18 b8: 0.3-0.5 s a step, whose three steps' 1 s of timing
# moved a cell by 30% from run to run); --repeats N takes the median of N runs, the grid measured N
# times over so that a drift of the machine falls on every cell. About 40 minutes on 2 cores with the defaults (a pair of resnet152 runs takes about a minute). Other work skews every timing: run it on
# an idle node, right after the build.
# --calibration-budget SECONDS: the first runs' budget (default: the command's own; a short one for a
# quick look at the script, not for figures).
# --before PATH: an earlier build's dnntune makes its own first run from its own empty cache before
# this one's, and both answers and models are judged on one grid (the ground truth measured once):
# what a change to the first run did, side by side.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dnntune=$here/../build/cli/dnntune
cases=resnet18:8,resnet50:16,inception_v3:32,resnet152:32
configs=1x2,2x1
repeats=1
pairs=3
allocators=""
directory=""
before=""
budget=()
while (($#)); do
  case $1 in
    --cases) cases=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --allocators) allocators=$2; shift 2 ;;
    --dnntune) dnntune=$2; shift 2 ;;
    --directory) directory=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    --calibration-budget) budget=(--calibration-budget "$2"); shift 2 ;;
    *) echo "first_answer_figures.sh: unknown argument '$1' (--cases, --configs, --allocators, --repeats, --pairs, --dnntune, --before, --calibration-budget, --directory)" >&2
       exit 2 ;;
  esac
done
[[ $repeats =~ ^[1-9][0-9]?$ ]] || { echo "first_answer_figures.sh: --repeats must be 1..99" >&2; exit 2; }
[[ $pairs =~ ^[0-9]$ ]] || { echo "first_answer_figures.sh: --pairs must be 0..9" >&2; exit 2; }
for item in ${cases//,/ }; do
  [[ $item =~ ^[a-z0-9_]+:[1-9][0-9]*$ ]] || { echo "first_answer_figures.sh: a case is MODEL:BATCH, e.g. resnet50:16" >&2; exit 2; }
done
for config in ${configs//,/ }; do
  [[ $config =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "first_answer_figures.sh: a config is PROCESSESxTHREADS, e.g. 2x1" >&2; exit 2; }
done
[[ -x $dnntune ]] || { echo "first_answer_figures.sh: no dnntune at $dnntune (build first, or --dnntune PATH)" >&2; exit 2; }
[[ -z $before || -x $before ]] || { echo "first_answer_figures.sh: --before: no dnntune at $before" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "first_answer_figures.sh: needs /usr/bin/time (Debian package: time)" >&2; exit 2; }
/usr/bin/python3 -c "import torchvision" 2>/dev/null ||
  { echo "first_answer_figures.sh: /usr/bin/python3 has no torchvision (Debian: python3-torchvision)" >&2; exit 2; }
directory=${directory:-$(mktemp -d /tmp/dnntune-first-answer-XXXXXX)}
mkdir -p "$directory"

mapfile -t variants < <(DNNTUNE_CACHE_DIR="$directory/probe-cache" "$dnntune" probe --quick | awk '
  /^Allocators/ { on = 1; next }
  on && /^  [a-z]/ { print $1; next }
  on { on = 0 }')
((${#variants[@]})) || { echo "first_answer_figures.sh: dnntune probe listed no allocator" >&2; exit 1; }
if [[ -n $allocators ]]; then
  for name in ${allocators//,/ }; do
    [[ " ${variants[*]} " == *" $name "* ]] ||
      { echo "first_answer_figures.sh: --allocators: '$name' is not installed here (${variants[*]})" >&2; exit 2; }
  done
  variants=(${allocators//,/ })
fi

# median of numbers on standard input ("-" when none), with DIGITS decimals (default 2)
median() { sort -g | awk -v digits="${1:-2}" '{ v[NR] = $1 } END { if (!NR) { print "-"; exit }
  printf "%.*f\n", digits, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

python_images_per_second() {  # MODEL BATCH PROCESSES THREADS ALLOCATOR ITERS: one run's images/s, "-" on failure
  local arguments=(train --runner python --model "$1" --batch "$2" --threads "$4" --iters "$6" --warmup 1 --allocator "$5" --json)
  if (($3 > 1)); then arguments+=(--launch --ppn "$3"); fi
  "$dnntune" "${arguments[@]}" 2>/dev/null | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["images_per_second"])' ||
    echo -
}

# first_answer LABEL DNNTUNE: LABEL's first run from an empty cache in $case_directory/LABEL; prints what
# it announced, measured and skipped, and sets answer[LABEL] to "CONFIG ALLOCATOR BASIS WALL".
first_answer() {
  local label=$1 command=$2 folder="$case_directory/$1"
  mkdir -p "$folder/cache"
  DNNTUNE_CACHE_DIR="$folder/cache" /usr/bin/time -f "%e" -o "$folder/recommend.time" \
    "$command" recommend --model "$model" --batch "$batch" "${budget[@]}" --json >"$folder/recommend.json" \
    2>"$folder/recommend.err" || { echo "   $label: recommend failed: $(tail -1 "$folder/recommend.err")"; return 1; }
  echo "   $label first run: $(cat "$folder/recommend.time") s wall"
  # What it announced at its start, and what it measured and skipped (its own progress lines).
  grep -E "^dnntune: (first run|calibrating [0-9]+ new|measuring [0-9]+ layer|measured in|anchor)|skipped" \
    "$folder/recommend.err" | sed 's/^dnntune: /     /' || true
  local fields
  fields=$(/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); c = r.get("best", {}).get("configuration", {})
a = r.get("allocator", {}); chosen = a.get("chosen", "default")
basis = next((v.get("basis", "-") for v in a.get("variants", []) if v.get("name") == chosen), "-")
print("%sx%s" % (c.get("processes_per_node", "?"), c.get("threads_per_process", "?")), chosen, basis.replace(" ", "_"))' \
    "$folder/recommend.json")
  answer[$label]="$fields $(cat "$folder/recommend.time")"
  read -r config allocator basis <<<"$fields"
  echo "   $label answer: $config under $allocator (allocator basis: ${basis//_/ })"
}

# model_errors LABEL DNNTUNE ALLOCATOR: LABEL's model (its first run's cache) against PyTorch at each
# layout of the grid under ALLOCATOR: predicted, measured, error.
model_errors() {
  local label=$1 command=$2 allocator=$3 config predicted value line="   $1 model vs PyTorch ($3):"
  for config in "${grid[@]}"; do
    predicted=$(DNNTUNE_CACHE_DIR="$case_directory/$label/cache" "$command" predict --model "$model" --batch "$batch" \
      --ppn "${config%x*}" --threads "${config#*x}" --allocator "$allocator" --json 2>/dev/null |
      /usr/bin/python3 -c 'import json, sys; v = json.load(sys.stdin)["images_per_second"]; print("%.2f" % v if v else "-")' ||
      echo -)
    value=${measured["$config $allocator"]:--}
    if [[ $predicted != - && $value != - ]]; then
      line+=" $config $predicted/$value $(awk -v p="$predicted" -v m="$value" 'BEGIN { printf "%+.1f%%", 100 * (p - m) / m }')"
    else
      line+=" $config $predicted/$value"
    fi
  done
  echo "$line"
}

# judge LABEL: LABEL's answer against the grid's best, paired runs where another setup was best;
# appends its summary row.
judge() {
  local label=$1 chosen_config chosen_allocator basis wall
  read -r chosen_config chosen_allocator basis wall <<<"${answer[$label]}"
  local recommended=${measured["$chosen_config $chosen_allocator"]:--} ratio="-" paired="-" ratios=() p a b
  if [[ $recommended != - && $best != 0 ]]; then
    ratio=$(awk -v r="$recommended" -v b="$best" 'BEGIN { printf "%.4f", r / b }')
    if [[ -n ${paired_of["$chosen_config $chosen_allocator"]:-} ]]; then
      paired=${paired_of["$chosen_config $chosen_allocator"]}  # another build's answer: the same pairs
    elif ((pairs)) && [[ $best_key != "$chosen_config $chosen_allocator" ]]; then
      local best_config=${best_key% *} best_allocator=${best_key#* }
      for ((p = 0; p < pairs; p++)); do
        a=$(python_images_per_second "$model" "$batch" "${chosen_config%x*}" "${chosen_config#*x}" "$chosen_allocator" "$iters")
        b=$(python_images_per_second "$model" "$batch" "${best_config%x*}" "${best_config#*x}" "$best_allocator" "$iters")
        echo "   $label pair $((p + 1)): $chosen_config $chosen_allocator $a, $best_key $b"
        [[ $a =~ ^[0-9.]+$ && $b =~ ^[0-9.]+$ ]] && ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", a / b }')")
      done
      ((${#ratios[@]})) && paired=$(printf '%s\n' "${ratios[@]}" | median 4)
      paired_of["$chosen_config $chosen_allocator"]=$paired
    fi
  fi
  # Four decimals, so that a ratio of 0.9496 is not judged as its rounded 0.950.
  local judged verdict
  judged=$([[ $paired != - ]] && echo "$paired" || echo "$ratio")
  if [[ $judged == - ]]; then
    verdict="could not be measured"
  else
    verdict=$(awk -v x="$judged" 'BEGIN { print (x >= 0.95 ? "within 5% of the best" : "MISSES the 5% target") }')
  fi
  echo "   $label recommended $chosen_config $chosen_allocator: $recommended images/s; best measured: $best_key $best; ratio $ratio, paired $paired: $verdict"
  summary+=("$(printf '%-13s %5s %-7s %9s %-22s %-24s %8s %-20s %7s %7s %s' "$model" "$batch" "$label" "$wall" \
    "$chosen_config $chosen_allocator" "${basis//_/ }" "$recommended" "$best_key" "$ratio" "$paired" "$verdict")")
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) hardware threads; allocators here: ${variants[*]}"
echo "files: $directory"
labels=(answer)
commands=("$dnntune")
if [[ -n $before ]]; then labels=(before answer); commands=("$before" "$dnntune"); fi
summary=()
for item in ${cases//,/ }; do
  model=${item%:*} batch=${item#*:}
  case_directory="$directory/$model-b$batch"
  echo
  echo "== $model batch $batch"
  declare -A answer=() paired_of=()  # paired_of: an answer's paired ratio, run once per setup
  for i in "${!labels[@]}"; do first_answer "${labels[$i]}" "${commands[$i]}" || true; done
  ((${#answer[@]})) || continue
  # The timed steps of each cell: about 10 s at the base anchor's step (its first record), 3 to 30.
  iters=$(/usr/bin/python3 - "$case_directory/${labels[-1]}"/cache/*/measurements/network.jsonl <<'PY' 2>/dev/null || echo 3
import json, math, sys
steps = [r["median_seconds"] for r in map(json.loads, open(sys.argv[1]))
         if r.get("kind") == "network" and r.get("pass") == "iteration" and r.get("status") == "ok"]
print(min(30, max(3, math.ceil(10 / steps[0]))) if steps and steps[0] > 0 else 3)
PY
)
  echo "   grid: $iters timed steps a cell"
  # The grid, each answer's setup measured in it (or on its own when outside --configs).
  declare -A measured=()
  printf '   %-8s' "PyTorch"
  for name in "${variants[@]}"; do printf ' %12s' "$name"; done
  echo
  grid=(${configs//,/ })
  for label in "${!answer[@]}"; do
    read -r config _ <<<"${answer[$label]}"
    [[ " ${grid[*]} " == *" $config "* ]] || grid+=("$config")
  done
  declare -A runs=()
  for ((r = 0; r < repeats; r++)); do
    for config in "${grid[@]}"; do
      for name in "${variants[@]}"; do
        runs["$config $name"]+=" $(python_images_per_second "$model" "$batch" "${config%x*}" "${config#*x}" "$name" "$iters")"
      done
    done
  done
  for config in "${grid[@]}"; do
    printf '   %-8s' "$config"
    for name in "${variants[@]}"; do
      value=$(tr ' ' '\n' <<<"${runs["$config $name"]}" | { grep -E '^[0-9.]+$' || true; } | median)
      measured["$config $name"]=$value
      printf ' %12s' "$value"
    done
    echo "   (runs: $(for name in "${variants[@]}"; do printf '%s:%s ' "$name" "${runs["$config $name"]# }"; done))"
  done
  unset runs
  best_key="" best=0
  for key in "${!measured[@]}"; do
    value=${measured[$key]}
    [[ $value == - ]] && continue
    config=${key% *}
    [[ ",$configs," == *",$config,"* ]] || continue  # the best over --configs only
    if awk -v a="$value" -v b="$best" 'BEGIN { exit !(a > b) }'; then best=$value best_key=$key; fi
  done
  for i in "${!labels[@]}"; do
    [[ -n ${answer[${labels[$i]}]:-} ]] || continue
    read -r _ allocator _ <<<"${answer[${labels[$i]}]}"
    model_errors "${labels[$i]}" "${commands[$i]}" "$allocator"
    judge "${labels[$i]}"
  done
  unset measured answer paired_of
done
echo
printf '%-13s %5s %-7s %9s %-22s %-24s %8s %-20s %7s %7s %s\n' network batch build "first s" recommended "allocator basis" \
  "img/s" "best measured" ratio paired verdict
printf '%s\n' "${summary[@]}"
