#!/usr/bin/python3
"""tests/python/bounds_test.py DNNTUNE_SOURCE BUILD_DIR — `import dnntune` refuses what the command
refuses (issue 42): a network that computes nothing (320,000,000 images/s, and a GPU band of None,
before), an anchor or a profile outside physical bounds. Each raises ValueError naming the file."""
import atexit
import json
import os
import shutil
import sys
import tempfile

source, build = sys.argv[1], sys.argv[2]
sys.path.insert(0, build + "/python")
import dnntune  # noqa: E402


def check(condition, what):
    if not condition:
        sys.exit("FAILED: " + what)
    print("ok: " + what)


def raises(call, text, what):
    try:
        result = call()
    except ValueError as error:
        check(text in str(error), what + " raises ValueError naming it: " + str(error)[:100])
        return
    check(False, what + " raises ValueError, not " + json.dumps(result)[:200])


directory = tempfile.mkdtemp(prefix="dnntune-bounds-")
atexit.register(shutil.rmtree, directory, ignore_errors=True)  # on a failure (sys.exit) too


def write(name, document):
    path = os.path.join(directory, name)
    with open(path, "w") as out:
        json.dump(document, out)
    return path


only_input = write("only_input.json", {"schema": "dnntune.network", "schema_version": 1, "name": "only_input",
                                       "layers": [{"name": "input", "descriptor": "input:ic3ih16iw16", "inputs": []}]})
raises(lambda: dnntune.Model(machine="skylake-8180").predict(only_input), "computes nothing",
       "a CPU prediction of only an input")
raises(lambda: dnntune.Model(machine="h200").predict(only_input), "computes nothing",
       "a GPU prediction of only an input")

with open(os.path.join(source, "data/reference_calibrations/torch.json")) as file:
    calibration = json.load(file)
calibration["anchors"] = [{"network": "resnet18", "batch": 8, "threads": 1, "smt": False, "processes": 1, "steps": 3,
                           "forward_seconds": 0, "backward_seconds": 2.0, "iteration_seconds": 3.2,
                           "iteration_coefficient_of_variation": 0.02, "layers_forward_seconds": 1.1,
                           "layers_backward_seconds": 2.1}]
raises(lambda: dnntune.Model(calibration=write("anchor.json", calibration)), "(/anchors/0) forward_seconds",
       "an anchor whose forward pass took no time")

machine = dict(calibration["machine"])
machine["topology"] = dict(machine["topology"], cores=56.5)
raises(lambda: dnntune.Model(machine=write("cores.json", machine)), "(/topology/cores) must be an integer",
       "a profile of 56.5 cores")
with open(os.path.join(source, "data/machines/h200.json")) as file:
    gpu = json.load(file)
gpu["gpu"]["memory_bytes"] = -1
raises(lambda: dnntune.Model(machine=write("gpu.json", gpu)), "(/gpu/memory_bytes)", "a GPU of -1 bytes")

prediction = dnntune.Model(machine="h200").predict("resnet50")
check(prediction["band"]["low"] is not None and 0 < prediction["band"]["low"] < prediction["band"]["high"],
      "a GPU prediction carries a finite band")

# Every bad keyword is the command's ValueError (issue 61): a bool where a number is meant, a
# string, a fraction, a number past the range, NaN, an empty list or name, a name twice, a size
# under one byte; never pybind's TypeError with its signature dump, never accepted.
cpu, gpu_model = dnntune.Model(machine="skylake-8180"), dnntune.Model(machine="h200")
for call, text, what in [
        (lambda: cpu.predict("resnet50", batch=True), "batch: Value True is not a number", "batch=True"),
        (lambda: cpu.predict("resnet50", smt="yes"), "smt: True or False", "smt='yes'"),
        (lambda: cpu.recommend("resnet50", batches=[]), "batches: empty list", "batches=[]"),
        (lambda: gpu_model.recommend("resnet50", gpus=[]), "gpus: empty list", "gpus=[]"),
        (lambda: gpu_model.predict("resnet50", precision=""), "--precision must be", "precision=''"),
        (lambda: gpu_model.recommend("resnet50", precision=""), "--precision must be", "recommend precision=''"),
        (lambda: gpu_model.predict("resnet50", memory_format=""), "--memory-format must be", "memory_format=''"),
        (lambda: gpu_model.predict("resnet50", fusion_mb=1e-320), "fusion_mb: Value 1e-320 not in range",
         "fusion_mb=1e-320"),
        (lambda: gpu_model.recommend("resnet50", fusion_mb=[1e-320]), "fusion_mb: Value 1e-320 not in range",
         "fusion_mb=[1e-320]"),
        (lambda: gpu_model.recommend("resnet50", precision=["fp32", "fp32"]), "fp32 is listed twice",
         "a repeated precision"),
        (lambda: cpu.predict("resnet50", batch=1.5), "batch: Value 1.5 is not an integer", "batch=1.5"),
        (lambda: cpu.predict("resnet50", batch=2**70), "not in range 1 to 65536", "batch=2**70"),
        (lambda: cpu.predict("resnet50", nodes=float("nan")), "nodes: Value nan is not a number", "nodes=nan"),
        (lambda: cpu.recommend("resnet50", batches=["32"]), "batches: Value '32' is not a number", "batches=['32']"),
        (lambda: cpu.recommend("resnet50", batches=[True]), "batches: Value True is not a number", "batches=[True]"),
        (lambda: cpu.recommend("resnet50", consider_smt=1), "consider_smt: True or False", "consider_smt=1"),
        (lambda: gpu_model.predict("resnet50", gpus=True), "gpus: Value True is not a number", "gpus=True"),
        (lambda: cpu.predict("resnet50", allocator=""), "allocator: an allocator name", "allocator=''"),
        (lambda: cpu.predict("resnet50", allocator="no-such"), "--allocator: unknown allocator", "allocator='no-such'"),
        (lambda: gpu_model.predict("resnet50", allocator="default"), "allocator: these describe CPU nodes",
         "allocator= on a GPU machine"),
        # max_minutes= as recommend's --max-minutes: its number rule, and the limit it sets.
        (lambda: cpu.recommend("resnet50", max_minutes=0), "max_minutes: Value 0 not in range 0 (excluded)",
         "max_minutes=0"),
        (lambda: cpu.recommend("resnet50", max_minutes=True), "max_minutes: Value True is not a number",
         "max_minutes=True"),
        (lambda: cpu.recommend("resnet50", max_minutes="5"), "max_minutes: Value '5' is not a number",
         "max_minutes='5'"),
        (lambda: cpu.recommend("resnet152", nodes="1..1048576", batches="1..32768", max_minutes=1e-9),
         "past the limit of 1e-09 minutes: shorten the lists (node counts, batches, fusion sizes) or raise max_minutes",
         "a search past max_minutes"),
        (lambda: gpu_model.recommend("resnet50", max_minutes=5), "max_minutes: these describe CPU nodes",
         "max_minutes= on a GPU machine")]:
    try:
        result = call()
    except ValueError as error:
        check(text in str(error) and "\n" not in str(error), what + " raises the command's ValueError: " + str(error)[:90])
        continue
    except TypeError as error:
        check(False, what + " raises ValueError, not TypeError: " + str(error)[:200])
    check(False, what + " raises ValueError, not " + json.dumps(result)[:200])
