#!/usr/bin/env bash
# benchmarks/study_figures.sh [DNNTUNE] — the four findings of Jain et al. (IEEE CLUSTER 2019) as
# dnntune answers them from the built-in spec profiles alone (skylake-8180, k80, v100; EDR between
# nodes), each as the study states it: "up to", the largest over its networks (ResNet-50/101/152,
# Inception-v3/v4) and the batches, with its band and the setting that gives it.
#
#   1. multi-process over single-process training on one Skylake-8180 node (study: up to 1.47x)
#   2. speed-up of that multi-process setting on 128 nodes over EDR (study: 125x, 97.7%)
#   3. the fastest Skylake-8180 node over one K80 (study: up to 2.35x)
#   4. one V100 over the fastest Skylake-8180 node (study: up to 3.32x)
#
# Only `recommend` (the best layouts), `predict` (128 nodes) and `compare` (the machines) are asked.
# It prints figures; it is not a test. STUDY_NETWORKS="resnet152" limits the networks (one at a
# time while developing: each network costs about half a minute of both cores).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dnntune=${1:-$here/build/cli/dnntune}
networks=${STUDY_NETWORKS:-resnet50 resnet101 resnet152 inception_v3 inception_v4}
python=/usr/bin/python3
work=$(mktemp -d /tmp/dnntune-study-figures-XXXXXX)
trap 'rm -rf "$work"' EXIT
export DNNTUNE_CACHE_DIR=${DNNTUNE_CACHE_DIR:-$work/cache}

for model in $networks; do
    "$dnntune" recommend --model "$model" --machine skylake-8180 --batch 16,32,64 --json --explain \
        >"$work/$model-recommend.json"
    # The best multi-process layout of the ranking, trained on 128 nodes.
    read -r ppn threads smt batch < <("$python" - "$work/$model-recommend.json" <<'PY'
import json, sys
ranking = json.load(open(sys.argv[1]))["ranking"]
c = max((p for p in ranking if p["configuration"]["processes_per_node"] > 1),
        key=lambda p: p["images_per_second"])["configuration"]
print(c["processes_per_node"], c["threads_per_process"], "on" if c["smt"] else "off", c["batch_per_process"])
PY
)
    smt_option=()
    [[ $smt == on ]] && smt_option=(--smt)
    "$dnntune" predict --model "$model" --machine skylake-8180 --ppn "$ppn" --threads "$threads" "${smt_option[@]}" \
        --batch "$batch" --nodes 128 --fabric edr --json >"$work/$model-128.json"
    "$dnntune" compare --model "$model" --machine skylake-8180 --machine k80 --machine v100 --batch 16,32,64,128 \
        --json >"$work/$model-compare.json"
done

"$python" - "$work" $networks <<'PY'
import json, sys
work, networks = sys.argv[1], sys.argv[2:]

def setting(p):
    c = p["configuration"]
    return f'{c["processes_per_node"]}x{c["threads_per_process"]}{" SMT" if c["smt"] else ""} b{c["batch_per_process"]}'

def band(p):
    return f'[{p["band"]["low"]:.3g}-{p["band"]["high"]:.3g}]'

rows = {"mp": [], "scale": [], "k80": [], "v100": []}
for model in networks:
    ranking = json.load(open(f"{work}/{model}-recommend.json"))["ranking"]
    ips = lambda p: p["images_per_second"]
    multi = max((p for p in ranking if p["configuration"]["processes_per_node"] > 1), key=ips)
    single = max((p for p in ranking if p["configuration"]["processes_per_node"] == 1), key=ips)
    rows["mp"].append((ips(multi) / ips(single), model,
                       f"MP {setting(multi)} {ips(multi):.1f} img/s {band(multi)} over SP {setting(single)} "
                       f"{ips(single):.1f} {band(single)} (bands of each side: the spec transfer they share)"))
    wide = json.load(open(f"{work}/{model}-128.json"))
    efficiency = wide["scaling_efficiency"]
    rows["scale"].append((efficiency, model,
                          f"{setting(wide)} on 128 EDR nodes: {128 * efficiency:.1f}x, {wide['images_per_second']:.0f} "
                          f"img/s {band(wide)}; stragglers {1e3 * wide['terms_seconds']['stragglers']:.1f} ms of "
                          f"{1e3 * wide['iteration_seconds']:.0f} ms; step spread: {wide.get('step_spread', '-')}"))
    machines = {m["machine"]: m for m in json.load(open(f"{work}/{model}-compare.json"))["machines"]}
    cpu, k80, v100 = machines["skylake-8180"], machines["k80"], machines["v100"]
    r = k80["ratio_to_first"]
    rows["k80"].append((1 / r["value"], model,
                        f"skylake {cpu['configuration']} {cpu['images_per_second']:.1f} over k80 {k80['configuration']} "
                        f"{k80['images_per_second']:.1f} (ratio band {1 / r['high']:.2f}-{1 / r['low']:.2f})"))
    r = v100["ratio_to_first"]
    rows["v100"].append((r["value"], model,
                         f"v100 {v100['configuration']} {v100['images_per_second']:.1f} over skylake "
                         f"{cpu['images_per_second']:.1f} (ratio band {r['low']:.2f}-{r['high']:.2f})"))

findings = [("mp", "multi- over single-process, one skylake-8180 node", 1.47, "x"),
            ("scale", "scaling efficiency on 128 skylake-8180 nodes (EDR)", 0.977, ""),
            ("k80", "fastest skylake-8180 over one k80", 2.35, "x"),
            ("v100", "one v100 over the fastest skylake-8180", 3.32, "x")]
for key, title, study, unit in findings:
    print(f"{title}")
    for value, model, text in rows[key]:
        figure = f"{100 * value:.1f}%" if key == "scale" else f"{value:.2f}x"
        print(f"  {model:13} {figure:7} {text}")
    if key == "scale":
        # The study's one figure is ResNet-152's; the others show the spread over networks.
        picked = next((row for row in rows[key] if row[1] == "resnet152"), max(rows[key]))
        print(f"  => {picked[1]}: {100 * picked[0]:.1f}% ({128 * picked[0]:.1f}x); study 97.7% (125x); "
              f"dnntune/study {picked[0] / study:.3f}")
    else:
        top = max(rows[key])
        print(f"  => up to {top[0]:.2f}x ({top[1]}); study up to {study:.2f}x; dnntune/study {top[0] / study:.3f}")
PY
