#!/usr/bin/env bash
# benchmarks/first_run_figures.sh [DNNTUNE] [DIR] — the figures of a new user's first run:
#   1. `dnntune probe`: wall time and peak resident memory (target: under 2 GiB);
#   2. the first `recommend --model resnet152` on an EMPTY cache: wall time (target: under
#      3 minutes, probe included), peak resident memory of the command and of its largest
#      worker (target: under 2 GiB), how many layer passes were measured and skipped, the
#      answer's band (target: high/low under 1.5) and its source (target: at least "partly
#      measured");
#   3. the recommended configuration trained for real (`recommend --verify 1`, 3 steps after a
#      warm-up, same batch): measured against predicted (target: within 15%, inside the band).
# The cache goes to DIR/cache (default: a new temporary directory). Run it on an idle node,
# right after the build as a new user would: other work skews every timing.
set -euo pipefail
dnntune=${1:-"$(dirname "$0")/../build/cli/dnntune"}
directory=${2:-$(mktemp -d /tmp/dnntune-first-run-XXXXXX)}
mkdir -p "$directory/cache"
export DNNTUNE_CACHE_DIR="$directory/cache"
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (Debian package: time)" >&2; exit 2; }

# Wall seconds and peak resident MiB (the process or its largest waited-for child) of a command.
timed() {  # timed NAME COMMAND...
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$directory/$name.time" "$@" >"$directory/$name.out" 2>"$directory/$name.err"
  read -r seconds kilobytes <"$directory/$name.time"
  printf '%s %.0f' "$seconds" "$(echo "$kilobytes / 1024" | bc -l)"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) hardware threads"
read -r seconds mib <<<"$(timed probe "$dnntune" probe)"
printf '1. probe:                       %6.1f s, peak %5d MiB resident\n' "$seconds" "$mib"

read -r seconds mib <<<"$(timed recommend "$dnntune" recommend --model resnet152)"
printf '2. first recommend, resnet152:  %6.1f s, peak %5d MiB resident (command or its largest worker)\n' "$seconds" "$mib"
grep -E "^dnntune: (measuring [0-9]+ layer|measured in|note:)" "$directory/recommend.err" | sed 's/^dnntune: /   /'
answer=$(grep -E "predicted .* images/s \(90% band" "$directory/recommend.out")
echo "   answer:$(grep -A1 '^Best for' "$directory/recommend.out" | tail -1)"
echo "  $answer"
read -r predicted low high source <<<"$(sed -E 's/.*predicted ([0-9.]+) images\/s \(90% band ([0-9.]+)-([0-9.]+), ([a-z ]+)\).*/\1 \2 \3 \4/' <<<"$answer")"
printf '   band high/low: %.2f (target < 1.5); source: %s\n' "$(echo "$high / $low" | bc -l)" "$source"

"$dnntune" recommend --model resnet152 --verify 1 >"$directory/verify.out" 2>"$directory/verify.err"
measured=$(sed -nE 's/^  measured ([0-9.]+) images\/s \(--verify\).*/\1/p' "$directory/verify.out")
error=$(echo "($predicted - $measured) / $measured * 100" | bc -l)
inside=$(echo "$measured >= $low && $measured <= $high" | bc -l)
printf '3. trained for real: %s images/s measured, %s predicted: %+.1f%% (target within 15%%), %s the band\n' \
  "$measured" "$predicted" "$error" "$([[ $inside == 1 ]] && echo inside || echo OUTSIDE)"
echo "files: $directory"
