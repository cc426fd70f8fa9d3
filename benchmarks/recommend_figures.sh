#!/usr/bin/env bash
# benchmarks/recommend_figures.sh [DNNTUNE] [DIR] — the figures of `dnntune recommend`:
#   1. first-run `recommend --model resnet152` on an empty cache (probe + bounded calibration +
#      fit + answer; target: under 2 minutes), then the same from the cache (under 1 s);
#   2. recommend and a 1..1024-node scan from a cached calibration for synthetic 2-socket SMT
#      nodes of 2 x 28 and 2 x 56 cores (targets: under 1 s and under 2 s), median of 5 runs;
#   3. for resnet18, resnet50 and inception_v3 at batch 8 per process on torch: the model's
#      pick against the best measured of every valid configuration of this node (target: within
#      5%), all of them trained for real by `recommend --verify` (3 steps each, after 1 warm-up).
# The cache goes to DIR/cache (default: a new temporary directory), so every network's default
# calibration is made fresh. Takes about 10 minutes on 2 cores. Run it on an idle node: other
# work skews the timings and, more, the measured ranking.
set -euo pipefail
dnntune=${1:-"$(dirname "$0")/../build/cli/dnntune"}
directory=${2:-$(mktemp -d /tmp/dnntune-recommend-figures-XXXXXX)}
mkdir -p "$directory/cache"
export DNNTUNE_CACHE_DIR="$directory/cache"

seconds_of() {  # runs the command, discards its output, prints its wall time in seconds
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

median_seconds_of() {  # median wall time of 5 runs
  for _ in 1 2 3 4 5; do seconds_of "$@"; done | sort -n | sed -n 3p
}

echo "1. recommend --model resnet152 on this node"
printf '   first run, empty cache:  %6.1f s\n' "$(seconds_of "$dnntune" recommend --model resnet152)"
printf '   from the cache:          %6.2f s\n' "$(median_seconds_of "$dnntune" recommend --model resnet152)"
calibration=$(find "$DNNTUNE_CACHE_DIR" -name calibration.json | head -1)

echo "2. from a cached calibration, synthetic SMT nodes (median of 5)"
for cores in 28 56; do
  topology="$directory/pack2-core$cores-pu2.xml"
  lstopo --of xml -i "pack:2 core:$cores pu:2" "$topology" 2> /dev/null
  node=(recommend --model resnet152 --topology "$topology" --calibration "$calibration")
  printf '   2 x %d cores: one node %5.2f s, --nodes 1..1024 %5.2f s\n' "$cores" \
    "$(median_seconds_of "$dnntune" "${node[@]}")" "$(median_seconds_of "$dnntune" "${node[@]}" --nodes 1..1024)"
done

echo "3. the model's pick against the measured best, batch 8 per process, torch"
printf '   %-13s %-9s %9s %-9s %9s %8s\n' network pick measured best measured loss
for model in resnet18 resnet50 inception_v3; do
  # Every valid configuration of this node, ranked: --verify trains all of them, the pick first.
  count=$("$dnntune" recommend --model "$model" --batch 8 2> /dev/null |
    awk '/configurations scored/ { print $1 }')
  "$dnntune" recommend --model "$model" --batch 8 --verify "$count" 2> "$directory/$model.progress.txt" |
    tee "$directory/$model.txt" |
    awk -v model="$model" '
      /trained for real/ { verified = 1; next }
      verified && /: measured / {
        split($0, halves, ": measured ")
        layout = halves[1]; sub(/^ +/, "", layout); sub(/ ppn x /, "x", layout); sub(/ threads?,.*/, "", layout)
        split(halves[2], numbers, " ")
        if (++seen == 1) { pick = layout; pick_measured = numbers[1] }
        if (numbers[1] + 0 > best_measured + 0) { best = layout; best_measured = numbers[1] }
        next
      }
      verified { verified = 0 }
      END {
        printf "   %-13s %-9s %9.2f %-9s %9.2f %7.1f%%\n", model, pick, pick_measured, best, best_measured,
               100 * (best_measured / pick_measured - 1)
      }'
done
echo "   (loss: how much faster the measured best ran than the model's pick; answers in $directory)"
