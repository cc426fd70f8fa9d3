"""benchmarks/device_node_summary.py WORK — the summary table of benchmarks/device_node.sh from the
files it wrote into WORK: images/s of the C++ trainer and of PyTorch from Python per precision and
batch on the GPU (with C++ / Python), the GPU calibrations' record counts, and the CPU check
(recommend's pick and predictions against every trained ranks x threads split). Reads only what
is there: a step that was skipped or failed leaves its cell empty. Standard library only."""
import glob
import json
import os
import re
import sys

work = sys.argv[1]


def load(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def cell(value, width=9):
    return ("%.0f" % value if isinstance(value, (int, float)) else "-").rjust(width)


# GPU trainers: train-RUNNER-NETWORK-PRECISION-BATCH.json
rates = {}
for path in glob.glob(os.path.join(work, "train-*-*-*-*.json")):
    match = re.match(r"train-(dnntune|python)-(\w+)-(fp32|tf32|bf16|fp16)-(\d+)\.json$", os.path.basename(path))
    report = load(path)
    if match and report and "images_per_second" in report:
        runner, network, precision, batch = match.groups()
        rates[(network, precision, int(batch), runner)] = report["images_per_second"]
print("GPU training, images/s (C++ trainer `dnntune train --device cuda`; PyTorch from Python `--runner python`)")
print("network    precision  batch      C++   Python  C++/Py")
for network, precision, batch in sorted({key[:3] for key in rates}, key=lambda k: (k[0], k[2], k[1])):
    cpp = rates.get((network, precision, batch, "dnntune"))
    python = rates.get((network, precision, batch, "python"))
    ratio = "%.2f" % (cpp / python) if cpp and python else "-"
    print("%-10s %-9s %6d %s %s %7s" % (network, precision, batch, cell(cpp, 8), cell(python, 8), ratio))

print()
print("GPU layer passes (calibrate --backend torch-cuda), records per precision")
for directory in sorted(glob.glob(os.path.join(work, "calibrate-*"))):
    records = os.path.join(directory, "layers.jsonl")
    if not os.path.isfile(records):
        continue
    counts = {}
    with open(records) as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            key = record.get("precision", "fp32") + "/" + record.get("memory_format", "contiguous")
            counts[key] = counts.get(key, 0) + (record.get("status") == "ok")
    print("  %s: %s" % (os.path.basename(directory), ", ".join("%s %d ok" % item for item in sorted(counts.items()))))

print()
print("CPU check: recommend --model resnet50 --batch 32 (empty cache) against train, ranks x threads")
recommendation = load(os.path.join(work, "cpu-recommend.json")) or {}
predicted = {}
for entry in recommendation.get("ranking", []):
    configuration = entry.get("configuration", {})
    if configuration.get("nodes", 1) == 1 and not configuration.get("smt", False) and \
            configuration.get("batch_per_process") == 32:
        key = (configuration.get("processes_per_node"), configuration.get("threads_per_process"))
        predicted.setdefault(key, entry.get("images_per_second"))
best = recommendation.get("best", {}).get("configuration", {})
if best:
    print("  recommend picks %dx%d (%s), predicted %s images/s" % (
        best.get("processes_per_node", 0), best.get("threads_per_process", 0),
        recommendation["best"].get("confidence", "?"), cell(recommendation["best"].get("images_per_second"), 0)))
print("  setting   measured  predicted")
measured = {}
for path in sorted(glob.glob(os.path.join(work, "cpu-train-*x*.json"))):
    match = re.match(r"cpu-train-(\d+)x(\d+)\.json$", os.path.basename(path))
    report = load(path)
    if match and report:
        key = (int(match.group(1)), int(match.group(2)))
        measured[key] = report.get("images_per_second")
for key in sorted(set(measured) | {k for k in predicted if k[0] * k[1] in (16, len(os.sched_getaffinity(0)))}):
    print("  %2dx%-6d %9s %10s" % (key[0], key[1], cell(measured.get(key), 9), cell(predicted.get(key), 10)))
if measured:
    fastest = max((value, key) for key, value in measured.items() if value)
    print("  fastest trained: %dx%d" % fastest[1])
