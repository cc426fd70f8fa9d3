#!/usr/bin/env bash
# benchmarks/gpu_spec_figures.sh [DNNTUNE] — the GPU model's figures from spec profiles (fp32,
# the efficiencies the output names: priors until a GPU reference calibration is measured), each
# with its 90% band, next to the figures the study and public benchmarks report:
#   1. resnet152: the best Skylake-8180 node against one K80 and one V100 (the study: the
#      Skylake node 2.35x faster than a K80, 3.32x slower than a V100);
#   2. resnet50 and inception_v3 images/s per GPU on K80, P100 and V100 at batch 32 and 64;
#   3. scaling efficiency of 8 GPUs on one node (DDP, 25 MiB buckets) over 8 single GPUs.
# Pure model: runs in seconds on any machine, no GPU needed.
set -euo pipefail
dnntune=${1:-"$(dirname "$0")/../build/cli/dnntune"}
python=/usr/bin/python3

field() {  # field PYTHON-EXPRESSION: evaluates it on the JSON document read from stdin as `d`
  "$python" -c "import json,sys; d=json.load(sys.stdin); print($1)"
}

echo "1. resnet152, each machine at its best (CPU: one node; GPU: one GPU)"
"$dnntune" compare --model resnet152 --machine skylake-8180 --machine k80 --machine v100 --batch 32,64 \
  | sed 's/^/   /'
echo "   the study: skylake-8180 2.35x faster than one K80, 3.32x slower than one V100"

echo "2. images/s per GPU (90% band)"
printf '   %-13s %-6s %-24s %-24s\n' network gpu "batch 32" "batch 64"
for network in resnet50 inception_v3; do
  for gpu in k80 p100 v100; do
    cells=()
    for batch in 32 64; do
      cells+=("$("$dnntune" predict --model "$network" --machine "$gpu" --batch "$batch" --json |
        field '"%.0f (%.0f - %.0f)" % (d["images_per_second"], d["band"]["low"], d["band"]["high"])')")
    done
    printf '   %-13s %-6s %-24s %-24s\n' "$network" "$gpu" "${cells[0]}" "${cells[1]}"
  done
done

echo "3. scaling efficiency of 8 GPUs on one node over 8 single GPUs (batch 64 per GPU)"
printf '   %-13s %-6s %-12s %-18s %s\n' network gpu efficiency "8-GPU images/s" "exposed all-reduce"
for network in resnet50 resnet152 inception_v3; do
  for gpu in k80 p100 v100; do
    if document=$("$dnntune" predict --model "$network" --machine "$gpu" --gpus 8 --batch 64 --json 2>&1); then
      echo "$document" | field '"   %-13s %-6s %-12s %-18s %.1f ms" % (d["network"], d["machine"],
        "%.1f%%" % (100 * d["scaling_efficiency"]), "%.0f" % d["images_per_second"],
        1e3 * d["terms_seconds"]["exposed_communication"])'
    else
      printf '   %-13s %-6s %s\n' "$network" "$gpu" "${document#dnntune: error: }"
    fi
  done
done
"$dnntune" predict --model resnet50 --machine v100 --batch 32 --json | field '"   efficiencies: " + d["efficiencies"]'
