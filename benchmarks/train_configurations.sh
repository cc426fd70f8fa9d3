#!/usr/bin/env bash
# benchmarks/train_configurations.sh [DNNTUNE] — the trainer's figures on this machine: images/s
# of resnet18, resnet50 and inception_v3 at batch 8 per process in every configuration of
# processes x threads that fits the node's cores (1 x 1, 1 x 2, 2 x 1 on 2 cores), with the
# spread over steps and the exposed communication / backward ratio of multi-rank runs; then
# the MPI all-reduce and exchange fits of `dnntune calibrate --comm` over 2 ranks.
# Medians of ITERS steps after WARMUP (environment, default 5 and 1); with RECORDS=FILE every
# training run's measurement records are appended to FILE. Takes about
# 10 minutes on 2 cores: 1-thread ResNet-50 steps take seconds each with Debian's libtorch.
# Other work on the machine skews the figures: run it on an idle node.
set -euo pipefail
dnntune=${1:-"$(dirname "$0")/../build/cli/dnntune"}
iters=${ITERS:-5}
warmup=${WARMUP:-1}
record=()
if [[ -n ${RECORDS:-} ]]; then record=(--record "$RECORDS"); fi
cores=$(nproc)

# "PROCESSES THREADS" for every configuration whose processes x threads fit the cores.
configurations() {
  for ((processes = 1; processes <= cores; processes++)); do
    for ((threads = 1; processes * threads <= cores; threads++)); do echo "$processes $threads"; done
  done
}

printf '%-13s %-8s %10s %21s %8s %17s\n' model config images/s "slowest..fastest" "step cv" "exposed/backward"
for model in resnet18 resnet50 inception_v3; do
  while read -r processes threads; do
    arguments=(train --model "$model" --batch 8 --iters "$iters" --warmup "$warmup" --threads "$threads"
               "${record[@]}")
    if ((processes > 1)); then arguments+=(--launch --ppn "$processes"); fi
    report=$("$dnntune" "${arguments[@]}" 2>/dev/null)
    awk -v model="$model" -v config="${processes}x${threads}" '
      /^throughput:/ { images = $2; slowest = substr($4, 2); fastest = $6 }
      /^  backward / { backward = $2 }
      /^  exposed communication / { exposed = $3 }
      /^  iteration / { cv = $4 }
      END {
        ratio = backward > 0 && config !~ /^1x/ ? sprintf("%.3f", exposed / backward) : "-"
        printf "%-13s %-8s %10.2f %10.2f..%-10.2f %8s %17s\n", model, config, images, slowest, fastest, cv, ratio
      }' <<<"$report"
  done < <(configurations)
done

echo
mpirun_arguments=(-np 2)
if ((EUID == 0)); then mpirun_arguments+=(--allow-run-as-root); fi
mpirun "${mpirun_arguments[@]}" "$dnntune" calibrate --comm 2>/dev/null
