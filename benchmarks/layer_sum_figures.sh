#!/usr/bin/env bash
# benchmarks/layer_sum_figures.sh [DNNTUNE] [DIR] — the sum-of-layers / step ratios of issue 11:
# per allocator, network, batch, threads and pass (forward, backward = backward-data +
# backward-weights), micro-runs and steps both under the same allocator:
#   * isolated / step: the raw micro-runs (`dnntune calibrate --allocator A`, torch backend, one
#     process) of every layer pass the network runs, summed, against the real step's pass
#     (`dnntune train --allocator A`);
#   * in-network / step: the same layers timed inside that step (`train --module-times`): what
#     is left is the untimed glue;
#   * page faults: the step's minor faults per pass (fresh pages the allocator handed out), and
#     for glibc's default, compute + faults / step: glibc-tuned's micro-runs (which fault nothing)
#     plus those faults at the probe's first-touch cost (machine.json), against the default's step;
#   * model before / after (default allocator, what the fit uses): the fitted model's pass
#     (predict --json, its terms) against the step, fitted from the micro-runs alone (before),
#     and with the context correction fitted from the OTHER networks' module times only (after:
#     leave-one-network-out, so no network is corrected by its own anchor; the exact-anchor
#     correction would make it 1 by construction).
# Then the modules that disagree most, and the transparent-huge-page state.
#
# Knobs (environment):
#   LAYER_SUM_NETWORKS   default "resnet18 resnet50 inception_v3"
#   LAYER_SUM_BATCHES    default "8 16"
#   LAYER_SUM_THREADS    default "1 2"
#   LAYER_SUM_ALLOCATORS default "default glibc-tuned" (the first must be default: the model's)
#   LAYER_SUM_STEPS      timed training steps per run (default 5; 2 warm-up steps before them)
#   LAYER_SUM_BUDGET     seconds the micro-runs of one allocator may take (default 3600: the whole
#                        grid, no sampling)
#   LAYER_SUM_SHORT=1    resnet18 and resnet34 (which shares its layers: cheap), batch 8, 2 threads,
#                        3 steps: a few minutes, to check the script, not figures
#   LAYER_SUM_MICRO_ENV  extra environment for the micro-runs only, e.g. "OMP_WAIT_POLICY=passive"
#                        for the OpenMP team's wake-up
# Figures depend on what else runs on the machine: run it idle, and twice (the spread is the floor).
set -euo pipefail
dnntune=${1:-"$(dirname "$0")/../build/cli/dnntune"}
directory=${2:-$(mktemp -d /tmp/dnntune-layer-sum-XXXXXX)}
networks=${LAYER_SUM_NETWORKS:-"resnet18 resnet50 inception_v3"}
batches=${LAYER_SUM_BATCHES:-"8 16"}
threads=${LAYER_SUM_THREADS:-"1 2"}
allocators=${LAYER_SUM_ALLOCATORS:-"default glibc-tuned"}
steps=${LAYER_SUM_STEPS:-5}
budget=${LAYER_SUM_BUDGET:-3600}
if [[ "${LAYER_SUM_SHORT:-0}" == 1 ]]; then
  networks="resnet18 resnet34" batches=8 threads=2 steps=3
fi
mkdir -p "$directory"
python=/usr/bin/python3
[[ "$allocators" == default* ]] || { echo "layer_sum_figures: LAYER_SUM_ALLOCATORS must start with default" >&2; exit 2; }
echo "layer_sum_figures: networks [$networks], batches [$batches], threads [$threads], allocators [$allocators]," \
     "$steps steps; into $directory"
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)," \
     "defrag $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null || echo unknown)"
echo "micro-run environment: ${LAYER_SUM_MICRO_ENV:-(as is)}"

model_options=() batch_options=() thread_options=()
for network in $networks; do model_options+=(--model "$network"); done
for batch in $batches; do batch_options+=(--batch "$batch"); done
for thread in $threads; do thread_options+=(--threads "$thread"); done

# 1. The micro-runs under each allocator (records keyed by it, one directory): every distinct
#    layer pass of the networks at each batch and thread count.
resume=()
for allocator in $allocators; do
  start=$(date +%s)
  env ${LAYER_SUM_MICRO_ENV:-} "$dnntune" calibrate "${model_options[@]}" "${batch_options[@]}" "${thread_options[@]}" \
    --backend torch --processes 1 --no-smt --budget "$budget" --allocator "$allocator" "${resume[@]}" -o "$directory" \
    > "$directory/calibrate-$allocator.txt" 2> "$directory/calibrate-$allocator.progress.txt"
  echo "micro-runs under $allocator: $(grep -E 'Measured in' "$directory/calibrate-$allocator.txt" | sed 's/^ *//')" \
       "(wall $(( $(date +%s) - start )) s)"
  resume=(--resume)
done

# 2. Each network trained for real at each batch and thread count under each allocator, its
#    layers timed inside the step.
for allocator in $allocators; do
  for network in $networks; do
    for batch in $batches; do
      for thread in $threads; do
        output="$directory/train-$allocator-$network-b$batch-t$thread.txt"
        "$dnntune" train --model "$network" --batch "$batch" --threads "$thread" --iters "$steps" --warmup 2 \
          --allocator "$allocator" --module-times --record "$directory/network.jsonl" > "$output"
        grep -E "^(modules|page faults)" "$output" | sed "s/^/  $allocator $network b$batch ${thread}t: /"
      done
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
import json, math, pathlib, re, sys
directory = pathlib.Path(sys.argv[1])
report = json.loads((directory / "modules.json").read_text())
performance = json.loads((directory / "machine.json").read_text()).get("performance", {})
def figure(name):
    return (performance.get(name) or {}).get("value", 0)
def fault_seconds(threads):  # per fault, a process of `threads` threads (model/allocation.cpp)
    ns = figure("first_touch_ns_per_page") if threads == 1 else figure("first_touch_ns_per_page_all_cores")
    return ns * 1e-9 / threads
def page_faults(allocator, row):
    path = directory / f"train-{allocator}-{row['network']}-b{row['batch']}-t{row['threads']}.txt"
    found = re.search(r"page faults.*: forward (\d+), backward (\d+)", path.read_text()) if path.exists() else None
    return int(found.group(1 if row["pass"] == "forward" else 2)) if found else None
def ratio(a, b):
    return f"{a / b:6.2f}" if a > 0 and b > 0 else "     -"
def key(row):
    return (row["network"], row["batch"], row["threads"], row["pass"])
rows = {(row["allocator"], key(row)): row for row in report["passes"] if row["processes"] == 1}
allocators = list(dict.fromkeys(row["allocator"] for row in report["passes"]))
errors = {}
def note(name, value, step):
    if value > 0 and step > 0:
        errors.setdefault(name, []).append(abs(math.log(value / step)))
for allocator in allocators:
    print()
    print(f"Sum of layers / the trained step's pass, micro-runs and steps under {allocator}"
          " (1.00 = the layers explain the step)")
    default = allocator == "default"
    extra = f" {'model before':>12} {'after':>6} {'compute+faults':>14}" if default else ""
    print(f"  {'network':14} {'batch':>5} {'thr':>3} {'pass':8} {'step ms':>9} {'iso/step':>8} {'net/step':>8}"
          f" {'faults':>7}{extra}  micro-runs")
    for (row_allocator, row_key), row in sorted(rows.items()):
        if row_allocator != allocator:
            continue
        step = row["step_seconds"]
        faults = page_faults(allocator, row)
        note(f"{allocator}: isolated", row["isolated_seconds"], step)
        line = (f"  {row['network']:14} {row['batch']:5} {row['threads']:3} {row['pass']:8} {step * 1e3:9.1f} "
                f"{ratio(row['isolated_seconds'], step):>8} {ratio(row['in_network_seconds'], step):>8} "
                f"{faults if faults is not None else '-':>7}")
        if default:
            terms = {}
            for stage in ("before", "after"):
                path = directory / f"predict-{stage}-{row['network']}-b{row['batch']}-t{row['threads']}.json"
                if path.exists():
                    t = json.loads(path.read_text())["terms_seconds"]
                    terms[stage] = t["forward"] if row["pass"] == "forward" else t["backward_data"] + t["backward_weights"]
                    note(f"default: model {stage}", terms[stage], step)
            # What the step computes (glibc-tuned's micro-runs: no faults) and what it faults in.
            compute = rows.get(("glibc-tuned", row_key), {}).get("isolated_seconds", 0)
            explained = compute + (faults or 0) * fault_seconds(row["threads"]) if compute > 0 and faults is not None else 0
            note("default: compute + faults", explained, step)
            line += (f" {ratio(terms.get('before', 0), step):>12} {ratio(terms.get('after', 0), step):>6}"
                     f" {ratio(explained, step):>14}")
        print(line + f"  {row['measured_passes']} measured, {row['missing_passes']} missing")
print()
if figure("first_touch_ns_per_page"):
    print(f"First touch of a fresh page (probe): {figure('first_touch_ns_per_page'):.0f} ns one thread, "
          f"{figure('first_touch_ns_per_page_all_cores'):.0f} ns per thread with every core faulting")
for name, values in errors.items():
    mean = sum(values) / len(values)
    within = sum(1 for v in values if v <= math.log(1.1))
    print(f"  {name:>28}: mean |log ratio| {mean:.3f} (x{math.exp(mean):.2f}), {within} of {len(values)} rows within 10%")
PY
echo
sed -n '/disagree most/,$p' "$directory/modules.txt"
