#!/usr/bin/env bash
# benchmarks/layer_sum_figures.sh [DNNTUNE] [DIR] — the sum-of-layers / step ratios of issue 11:
# per network, batch, threads and pass (forward, backward = backward-data + backward-weights),
#   * isolated / step: the raw micro-runs (`dnntune calibrate`, torch backend, one process) of
#     every layer pass the network runs, summed, against the real step's pass (`dnntune train`);
#   * in-network / step: the same layers timed inside that step (`train --module-times`): what
#     is left is the untimed glue;
#   * model before / after: the fitted model's pass (predict --json, its terms) against the step,
#     fitted from the micro-runs alone (before), and with the context correction fitted from the
#     OTHER networks' module times only (after: leave-one-network-out, so no network is corrected
#     by its own anchor; the exact-anchor correction would make it 1 by construction).
# Then the modules that disagree most, and the transparent-huge-page and allocator state.
#
# Knobs (environment):
#   LAYER_SUM_NETWORKS  default "resnet18 resnet50 inception_v3"
#   LAYER_SUM_BATCHES   default "8 16"
#   LAYER_SUM_THREADS   default "1 2"
#   LAYER_SUM_STEPS     timed training steps per run (default 5; 2 warm-up steps before them)
#   LAYER_SUM_BUDGET    seconds the micro-runs may take (default 3600: the whole grid, no sampling)
#   LAYER_SUM_SHORT=1   resnet18 and resnet34 (which shares its layers: cheap), batch 8, 2 threads,
#                       3 steps: a few minutes, to check the script, not figures
#   LAYER_SUM_MICRO_ENV extra environment for the micro-runs only, e.g.
#                       "MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=4294967295" to see
#                       how much of the gap glibc's page-fault behaviour makes, or
#                       "OMP_WAIT_POLICY=passive" for the OpenMP team's wake-up
# Figures depend on what else runs on the machine: run it idle, and twice (the spread is the floor).
set -euo pipefail
dnntune=${1:-"$(dirname "$0")/../build/cli/dnntune"}
directory=${2:-$(mktemp -d /tmp/dnntune-layer-sum-XXXXXX)}
networks=${LAYER_SUM_NETWORKS:-"resnet18 resnet50 inception_v3"}
batches=${LAYER_SUM_BATCHES:-"8 16"}
threads=${LAYER_SUM_THREADS:-"1 2"}
steps=${LAYER_SUM_STEPS:-5}
budget=${LAYER_SUM_BUDGET:-3600}
if [[ "${LAYER_SUM_SHORT:-0}" == 1 ]]; then
  networks="resnet18 resnet34" batches=8 threads=2 steps=3
fi
mkdir -p "$directory"
python=/usr/bin/python3
echo "layer_sum_figures: networks [$networks], batches [$batches], threads [$threads], $steps steps; into $directory"
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)," \
     "defrag $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null || echo unknown)"
echo "micro-run environment: ${LAYER_SUM_MICRO_ENV:-(as is)}"

model_options=() batch_options=() thread_options=()
for network in $networks; do model_options+=(--model "$network"); done
for batch in $batches; do batch_options+=(--batch "$batch"); done
for thread in $threads; do thread_options+=(--threads "$thread"); done

# 1. The micro-runs: every distinct layer pass of the networks at each batch and thread count.
start=$(date +%s)
env ${LAYER_SUM_MICRO_ENV:-} "$dnntune" calibrate "${model_options[@]}" "${batch_options[@]}" "${thread_options[@]}" \
  --backend torch --processes 1 --no-smt --budget "$budget" -o "$directory" \
  > "$directory/calibrate.txt" 2> "$directory/calibrate.progress.txt"
echo "micro-runs: $(grep -E 'Measured in' "$directory/calibrate.txt" | sed 's/^ *//') (wall $(( $(date +%s) - start )) s)"

# 2. Each network trained for real at each batch and thread count, its layers timed inside the step.
for network in $networks; do
  for batch in $batches; do
    for thread in $threads; do
      "$dnntune" train --model "$network" --batch "$batch" --threads "$thread" --iters "$steps" --warmup 2 \
        --module-times --record "$directory/network.jsonl" > "$directory/train-$network-b$batch-t$thread.txt"
      grep -E "^modules" "$directory/train-$network-b$batch-t$thread.txt" | sed "s/^/  $network b$batch ${thread}t: /"
    done
  done
done

# 3. Before any correction: isolated, in-network and the step (calibrate --report --modules).
"$dnntune" calibrate --report "$directory" --modules > "$directory/modules.txt"
"$dnntune" calibrate --report "$directory" --modules --json > "$directory/modules.json"

# 4. The model before (micro-runs only) and after the context correction (the other networks'
#    module times): a fit per network, each predicting its network at every batch and thread count.
"$dnntune" fit "$directory/layers.jsonl" --machine "$directory/machine.json" --bootstrap 0 \
  -o "$directory/before.calibration.json" > /dev/null
for network in $networks; do
  $python - "$directory/network.jsonl" "$network" > "$directory/others-$network.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if line.strip() and json.loads(line).get("network") != sys.argv[2]:
        print(line, end="")
PY
  "$dnntune" fit "$directory/layers.jsonl" "$directory/others-$network.jsonl" --machine "$directory/machine.json" \
    --bootstrap 0 -o "$directory/after-$network.calibration.json" > /dev/null
  for batch in $batches; do
    for thread in $threads; do
      for stage in before after; do
        calibration="$directory/before.calibration.json"
        [[ $stage == after ]] && calibration="$directory/after-$network.calibration.json"
        "$dnntune" predict --model "$network" --batch "$batch" --threads "$thread" --calibration "$calibration" --json \
          > "$directory/predict-$stage-$network-b$batch-t$thread.json"
      done
    done
  done
done

$python - "$directory" <<'PY'
import json, math, pathlib, sys
directory = pathlib.Path(sys.argv[1])
report = json.loads((directory / "modules.json").read_text())
def ratio(a, b):
    return f"{a / b:6.2f}" if a > 0 and b > 0 else "     -"
print()
print("Sum of layers / the trained step's pass (1.00 = the layers explain the step)")
print(f"  {'network':14} {'batch':>5} {'thr':>3} {'pass':8} {'step ms':>9} {'iso/step':>8} {'net/step':>8} "
      f"{'model before':>12} {'after':>6}  micro-runs")
errors = {"isolated": [], "before": [], "after": []}
for row in report["passes"]:
    name = f"{row['network']}-b{row['batch']}-t{row['threads']}"
    terms = {}
    for stage in ("before", "after"):
        path = directory / f"predict-{stage}-{name}.json"
        if path.exists():
            t = json.loads(path.read_text())["terms_seconds"]
            terms[stage] = t["forward"] if row["pass"] == "forward" else t["backward_data"] + t["backward_weights"]
    step = row["step_seconds"]
    for stage, value in (("isolated", row["isolated_seconds"]), ("before", terms.get("before", 0)),
                         ("after", terms.get("after", 0))):
        if value > 0 and step > 0:
            errors[stage].append(abs(math.log(value / step)))
    print(f"  {row['network']:14} {row['batch']:5} {row['threads']:3} {row['pass']:8} {step * 1e3:9.1f} "
          f"{ratio(row['isolated_seconds'], step):>8} {ratio(row['in_network_seconds'], step):>8} "
          f"{ratio(terms.get('before', 0), step):>12} {ratio(terms.get('after', 0), step):>6}  "
          f"{row['measured_passes']} measured, {row['missing_passes']} missing")
for stage, values in errors.items():
    if values:
        mean = sum(values) / len(values)
        within = sum(1 for v in values if v <= math.log(1.1)) / len(values)
        print(f"  {stage:>8}: mean |log ratio| {mean:.3f} (x{math.exp(mean):.2f}), {100 * within:.0f}% of rows within 10%")
PY
echo
sed -n '/disagree most/,$p' "$directory/modules.txt"
