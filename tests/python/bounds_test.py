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
