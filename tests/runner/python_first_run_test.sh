#!/usr/bin/env bash
# tests/runner/python_first_run_test.sh DNNTUNE SOURCE_DIR — a first run on torchvision's resnet18
# (pipeline/first_run.cpp, deciding_runner), for real, with Debian's python3-torch and
# python3-torchvision: the anchors that decide (allocator variants, other layouts) are trained by
# PyTorch from Python, said at the start; the base anchor by the C++ trainer, with its per-module
# times (the layers' sum's correction). Apart from tests/runner/python_runner_test.sh so that the two
# run beside each other. Skipped (77) when /usr/bin/python3 cannot import torch and torchvision.
set -euo pipefail
dnntune=$1
source_dir=$2
/usr/bin/python3 "$source_dir/tests/python/has_modules.py" torch torchvision || { echo "skipped: no python3-torch / python3-torchvision"; exit 77; }
work=$(mktemp -d /tmp/dnntune-python-first-run-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log; do echo "--- $log"; tail -20 "$log"; done >&2; exit 1; }

# What ran depends on the machine's speed (the plan drops what does not fit, and says so), so every
# run recorded is checked: each allocator variant's, the run of glibc's defaults they are compared
# with and each other layout's by PyTorch, the base anchor's by the C++ trainer. 50 s: on an idle
# 2-core machine the probe, the layer passes the plan puts first, the base anchor and PyTorch's pair
# of an allocator variant and glibc's defaults.
DNNTUNE_CACHE_DIR=$work/cache "$dnntune" recommend --model resnet18 --batch 2 --calibration-budget 50 \
    >"$work/first.out" 2>"$work/first.log" || fail "the first run exited $?"
grep -q "are trained by PyTorch from Python, as the job runs" "$work/first.log" \
    || fail "the first run did not say PyTorch from Python trains the anchors that decide"
/usr/bin/python3 - "$work/first.log" "$work"/cache/*/measurements/network.jsonl <<'PY' || fail "a deciding anchor's trainer"
import json, sys
log = open(sys.argv[1]).read()
records = [json.loads(line) for line in open(sys.argv[2])]
runs = [r for r in records if r["kind"] == "network" and r["pass"] == "iteration" and r["status"] == "ok"]
base = runs[0]  # the base anchor is the first run trained
setting = lambda r: (r["processes"], r["threads"])
allocator = lambda r: r.get("allocator", "default")  # records leave glibc's defaults out
assert base["trainer"] == "dnntune" and allocator(base) == "default", base
assert any(r["kind"] == "module" and setting(r) == setting(base) for r in records), "the base anchor has no module times"
# Where PyTorch's pair does not fit beside the steps (a busy machine) the C++ trainer trains the
# anchors that decide, said: the plan's rule (tests/pipeline_first_run_plan_test.cpp), either way here.
deciding = "dnntune" if "the C++ trainer trains the anchors that decide" in log else "python"
variants = [r for r in runs if allocator(r) != "default"]
assert variants or "allocator anchors not trained" in log, "no allocator variant trained, and none said dropped"
assert all(r["trainer"] == deciding for r in variants), (deciding, [(allocator(r), r["trainer"]) for r in variants])
if variants and deciding == "python":  # the run of glibc's defaults the variants are compared with
    assert any(r["trainer"] == "python" and allocator(r) == "default" and setting(r) == setting(base) for r in runs)
others = [r for r in runs if setting(r) != setting(base)]
assert all(r["trainer"] == deciding for r in others), (deciding, [(setting(r), r["trainer"]) for r in others])
print("ok: the first run's deciding anchors by", deciding + ":", sorted({(setting(r), allocator(r)) for r in runs
                                                                     if r is not base and r["trainer"] == deciding}))
PY
