#!/usr/bin/env bash
# benchmarks/allocator_figures.sh [--models LIST] [--batches LIST] [--configs LIST] [--repeats N]
#                                 [--dnntune PATH] — issue 17's figures: the memory allocator as
# a tuning dimension. For each network, batch per process and configuration (PROCESSES x THREADS):
#   * images/s under each allocator variant installed here (`dnntune probe` lists them and how
#     each is loaded), measured by `dnntune train --allocator NAME` and by PyTorch from Python
#     (the same with `--runner python`: torchvision's network, its ranks under DistributedDataParallel),
#     each the median of N repeats with the lowest and highest (the run-to-run spread);
#   * the model's predicted gain of each variant over glibc's defaults with its 90% band
#     (`recommend --ppn P --json`: the first run calibrates this machine, anchors under each
#     variant included, in DNNTUNE_CACHE_DIR or the usual cache);
#   * whether recommend's allocator is the measured best, within the spread: its highest
#     repeat reaches the best variant's lowest.
# Defaults: resnet18,resnet50,inception_v3 x 8,16 x 1x2,2x1, 3 repeats (an hour or more on 2
# cores). Other work on the machine makes the figures noisy: run it on an idle node.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dnntune=$here/../build/cli/dnntune
models=resnet18,resnet50,inception_v3
batches=8,16
configs=1x2,2x1
repeats=3
while (($#)); do
  case $1 in
    --models) models=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --dnntune) dnntune=$2; shift 2 ;;
    *) echo "allocator_figures.sh: unknown argument '$1' (--models, --batches, --configs, --repeats, --dnntune)" >&2
       exit 2 ;;
  esac
done
[[ $repeats =~ ^[1-9][0-9]?$ ]] || { echo "allocator_figures.sh: --repeats must be 1..99" >&2; exit 2; }
for config in ${configs//,/ }; do
  [[ $config =~ ^[1-9]x[1-9]$ ]] || { echo "allocator_figures.sh: a config is PROCESSESxTHREADS, e.g. 2x1" >&2; exit 2; }
done
[[ -x $dnntune ]] || { echo "allocator_figures.sh: no dnntune at $dnntune (build first, or --dnntune PATH)" >&2; exit 2; }
torch_available=1
/usr/bin/python3 -c "import torchvision" 2>/dev/null || torch_available=0

# The name of each variant installed here, from probe's one list of them.
mapfile -t variants < <("$dnntune" probe --quick | awk '
  /^Allocators/ { on = 1; next }
  on && /^  [a-z]/ { print $1; next }
  on { on = 0 }')
((${#variants[@]})) || { echo "allocator_figures.sh: dnntune probe listed no allocator" >&2; exit 1; }

# median min max of numbers on standard input
summary() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "- - -"; exit } m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f %.2f\n", m, v[1], v[NR] }'; }

images_per_second() {  # RUNNER MODEL BATCH PROCESSES THREADS ALLOCATOR
  local arguments=(train --runner "$1" --model "$2" --batch "$3" --threads "$5" --iters 3 --warmup 1 --allocator "$6" --json)
  if (($4 > 1)); then arguments+=(--launch --ppn "$4"); fi
  "$dnntune" "${arguments[@]}" 2>/dev/null | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["images_per_second"])'
}

printf 'Allocators here: %s\n' "$(printf '%s ' "${variants[@]}")"
((torch_available)) || echo "PyTorch from Python: not available (/usr/bin/python3 has no torchvision); its column is -"
printf '\n%-13s %5s %6s %-12s %22s %22s %29s %s\n' network batch config allocator "dnntune train (min..max)" \
  "PyTorch (min..max)" "predicted gain" "recommend"
for model in ${models//,/ }; do
  for batch in ${batches//,/ }; do
    for config in ${configs//,/ }; do
      processes=${config%x*} threads=${config#*x}
      # The model's view: the allocator recommend picks for this network and batch at P processes.
      recommendation=$("$dnntune" recommend --model "$model" --batch "$batch" --ppn "$processes" --no-smt --json 2>/dev/null ||
                       echo '{}')
      declare -A measured_median=() measured_low=() measured_high=()
      rows=()
      for name in "${variants[@]}"; do
        read -r median low high < <(for ((r = 0; r < repeats; r++)); do
          images_per_second dnntune "$model" "$batch" "$processes" "$threads" "$name" || true
        done | summary)
        torch="-"
        if ((torch_available)); then
          read -r tm tl th < <(for ((r = 0; r < repeats; r++)); do
            images_per_second python "$model" "$batch" "$processes" "$threads" "$name" || true
          done | summary)
          torch="$tm ($tl..$th)"
        fi
        measured_median[$name]=$median measured_low[$name]=$low measured_high[$name]=$high
        predicted=$(/usr/bin/python3 -c '
import json, sys
r = json.loads(sys.argv[1]).get("allocator", {})
for v in r.get("variants", []):
    if v["name"] == sys.argv[2] and "gain" in v:
        print("%.2fx [%.2f-%.2f] %s" % (v["gain"], v["gain_band"][0], v["gain_band"][1], v["basis"])); break
else: print("-")' "$recommendation" "$name")
        rows+=("$(printf '%-13s %5s %6s %-12s %22s %22s %29s' "$model" "$batch" "$config" "$name" \
                 "$median ($low..$high)" "$torch" "$predicted")")
      done
      read -r chosen chosen_config < <(/usr/bin/python3 -c '
import json, sys
r = json.loads(sys.argv[1]); b = r.get("best", {}).get("configuration", {})
print(r.get("allocator", {}).get("chosen", "-"), "%sx%s" % (b.get("processes_per_node", "?"), b.get("threads_per_process", "?")))' \
        "$recommendation")
      best=""
      for name in "${!measured_median[@]}"; do
        [[ ${measured_median[$name]} == - ]] && continue
        if [[ -z $best ]] || awk -v a="${measured_median[$name]}" -v b="${measured_median[$best]}" 'BEGIN { exit !(a > b) }'; then
          best=$name
        fi
      done
      verdict="-"
      if [[ -n $best && -n ${measured_high[$chosen]:-} && ${measured_high[$chosen]} != - ]]; then
        if [[ $chosen == "$best" ]]; then verdict="picks the measured best"
        elif awk -v h="${measured_high[$chosen]}" -v l="${measured_low[$best]}" 'BEGIN { exit !(h >= l) }'; then
          verdict="within the spread of the best ($best)"
        else verdict="MISSES the measured best ($best)"; fi
      fi
      for row in "${rows[@]}"; do
        name=$(awk '{ print $4 }' <<<"$row")
        marker=""
        [[ $name == "$chosen" ]] && marker="<- recommend ($chosen_config): $verdict"
        echo "$row $marker"
      done
      unset measured_median measured_low measured_high
    done
  done
done
