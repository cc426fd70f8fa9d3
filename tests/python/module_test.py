#!/usr/bin/python3
"""tests/python/module_test.py DNNTUNE BUILD_DIR — `import dnntune` (the pybind11 module in
BUILD_DIR/python) answers exactly what the command answers: predict, scale and recommend for a
CPU and a GPU spec machine give the same JSON as `dnntune ... --json`, without a layout both use the
recommended one, `dnntune.Model()` is this machine from the same cached calibration as the command
(seeded here from a recorded calibration, so nothing is calibrated), and bad input raises ValueError."""
import json
import os
import shutil
import subprocess
import sys

dnntune_command, build = sys.argv[1], sys.argv[2]
sys.path.insert(0, build + "/python")
import dnntune  # noqa: E402
import command_checks  # noqa: E402  (beside this script)
from command_checks import check  # noqa: E402


def command_json(*arguments):
    return command_checks.command_json(dnntune_command, *arguments)


model = dnntune.Model(machine="skylake-8180")
check(model.cores == 56 and model.machine == "skylake-8180", "a spec machine loads (56 cores)")

prediction = model.predict("resnet50", processes_per_node=2, threads_per_process=28, batch=32, nodes=4)
expected = command_json("predict", "--model", "resnet50", "--machine", "skylake-8180", "--ppn", "2", "--threads", "28",
                        "--batch", "32", "--nodes", "4")
check(prediction == expected, "predict() equals `dnntune predict --json`")
check(prediction["schema"] == "dnntune.prediction" and prediction["band"]["low"] < prediction["images_per_second"],
      "predict() carries its schema and band")

scaling = model.scale("resnet152", processes_per_node=2, threads_per_process=28, nodes="1..64")
check(len(scaling["rows"]) == 7 and scaling["rows"][-1]["configuration"]["nodes"] == 64, "scale() over 1..64 nodes")

# One answer is what is tested, not the network: a CPU spec recommend bands every candidate, seconds of
# ResNet-152's layers apiece, a fraction of that of ResNet-18's.
recommendation = model.recommend("resnet18", batches=[32, 64])
expected = command_json("recommend", "--model", "resnet18", "--machine", "skylake-8180", "--batch", "32,64")
check(recommendation == expected, "recommend() equals `dnntune recommend --json`, the whole document")

gpu = dnntune.Model(machine="v100")
check(gpu.kind == "gpu" and gpu.gpus_per_node == 8 and gpu.machine == "v100", "a GPU machine loads (8 GPUs)")
prediction = gpu.predict("resnet50", gpus=8, batch=64, nodes=2)
expected = command_json("predict", "--model", "resnet50", "--machine", "v100", "--gpus", "8", "--batch", "64",
                        "--nodes", "2")
check(prediction == expected and prediction["schema"] == "dnntune.gpu-prediction",
      "GPU predict() equals `dnntune predict --machine v100 --json`")
scaling = gpu.scale("resnet152", gpus=8, nodes="1..16")
expected = command_json("scale", "--model", "resnet152", "--machine", "v100", "--gpus", "8", "--nodes", "1..16")
check(scaling == expected and len(scaling["rows"]) == 5, "GPU scale() equals `dnntune scale --machine v100 --json`")
recommendation = gpu.recommend("resnet152", batches=[32, 64])
expected = command_json("recommend", "--model", "resnet152", "--machine", "v100", "--batch", "32,64")
check(recommendation == expected, "GPU recommend() equals `dnntune recommend --machine v100 --json`")

for bad, call in [("unknown network", lambda: model.predict("resnet9000")),
                  ("gpus on a CPU machine", lambda: model.predict("resnet50", gpus=2)),
                  ("threads on a GPU machine", lambda: gpu.predict("resnet50", threads_per_process=4)),
                  ("more GPUs than the node has", lambda: gpu.predict("resnet50", gpus=9)),
                  ("a batch no GPU holds", lambda: gpu.predict("resnet152", batch=60000)),
                  ("batch 0", lambda: model.predict("resnet50", batch=0)),
                  ("unknown machine", lambda: dnntune.Model(machine="no-such-machine")),
                  ("an empty machine name", lambda: dnntune.Model(machine=""))]:
    try:
        call()
        check(False, bad + " raises ValueError")
    except ValueError as error:
        check(str(error) != "", bad + " raises ValueError: " + str(error).splitlines()[0][:70])

# The command's number rules (issue 42): 0 is refused, never read as the default; the ranges and
# the list grammar and limits are the command's.
for bad, call, words in [
        ("processes_per_node 0", lambda: model.predict("resnet50", processes_per_node=0), "not in range 1 to 4096"),
        ("threads_per_process 0", lambda: model.predict("resnet50", threads_per_process=0), "not in range 1 to 4096"),
        ("gpus 0", lambda: gpu.predict("resnet50", gpus=0), "not in range 1 to 4096"),
        ("2^31-1 nodes", lambda: model.predict("resnet50", nodes=2**31 - 1), "not in range 1 to 1048576"),
        ("GPU 2^31-1 nodes", lambda: gpu.predict("resnet50", nodes=2**31 - 1), "not in range 1 to 1048576"),
        ("a trailing comma in nodes", lambda: model.scale("resnet50", nodes="1,2,"), "empty item"),
        ("nodes with a space", lambda: model.scale("resnet50", nodes=" 8"), "is not a number"),
        ("nodes in hex", lambda: model.scale("resnet50", nodes="0x10"), "is not a number"),
        ("33 node counts", lambda: model.scale("resnet50", nodes=",".join(map(str, range(1, 34)))), "at most 32"),
        ("17 batches", lambda: model.recommend("resnet50", batches=list(range(1, 18))), "at most 16"),
        ("GPU fusion 0", lambda: gpu.predict("resnet50", fusion_mb=0), "not in range")]:
    try:
        call()
        check(False, bad + " raises ValueError")
    except ValueError as error:
        check(words in str(error), bad + " raises ValueError: " + str(error)[:90])

# Without a layout: the one `recommend` picks, said in "layout_basis", as the command does.
scaling = model.scale("resnet18", nodes="1..4")
expected = command_json("scale", "--model", "resnet18", "--machine", "skylake-8180", "--nodes", "1..4")
layout = scaling["rows"][0]["configuration"]
check(scaling == expected and "layout_basis" in scaling and layout["processes_per_node"] * layout["threads_per_process"] > 1,
      "scale() without a layout uses the recommended one, as `dnntune scale` does: " + scaling.get("layout_basis", "")[:60])

# dnntune.Model() is this machine from its cached calibration, the command's: a cache entry seeded
# with the fit of a recorded calibration that covers resnet18 at batch 8 (nothing is calibrated).
source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0]))))
recorded = source + "/tests/fixtures/anchored_resnet18_calibration"
os.environ["DNNTUNE_CACHE_DIR"] = command_checks.temporary_directory("dnntune-python-cache-")
os.environ["DNNTUNE_REFERENCE_DIR"] = os.environ["DNNTUNE_CACHE_DIR"] + "/no-references"
os.environ["DNNTUNE_EXECUTABLE"] = dnntune_command
from dnntune import _dnntune  # noqa: E402
entry = _dnntune.cache_entry("torch")
os.makedirs(entry + "/measurements")
shutil.copy(recorded + "/machine.json", entry + "/measurements/machine.json")
# `fit -o` refuses to write into the cache (only dnntune's own runs do): fit beside it, then seed.
fitted = command_checks.temporary_directory("dnntune-python-fit-") + "/calibration.json"
subprocess.run([dnntune_command, "fit", recorded, "-o", fitted, "--bootstrap", "4"], capture_output=True, check=True)
shutil.copy(fitted, entry + "/calibration.json")
with open(entry + "/covered.json", "w") as covered:
    json.dump({"covered": ["resnet18@8"]}, covered)
here = dnntune.Model()
prediction = here.predict("resnet18", batch=8)
answered = subprocess.run([dnntune_command, "predict", "--model", "resnet18", "--batch", "8", "--json"],
                          capture_output=True, text=True, check=True)
check("calibrating" not in answered.stderr, "the command answers from the seeded cache: " + answered.stderr[-200:])
check(prediction == json.loads(answered.stdout) and "layout_basis" in prediction,
      "Model().predict() equals `dnntune predict --json` from this machine's cached calibration")
check(here.scale("resnet18", batch=8, nodes="1..4") ==
      command_json("scale", "--model", "resnet18", "--batch", "8", "--nodes", "1..4"),
      "Model().scale() equals `dnntune scale --json` from the cache")
check(here.recommend("resnet18", batches=[8]) == command_json("recommend", "--model", "resnet18", "--batch", "8"),
      "Model().recommend() equals `dnntune recommend --json` from the cache, the whole document")
check(os.listdir(entry + "/measurements") == ["machine.json"], "nothing was calibrated")

example = subprocess.run(["/usr/bin/python3", sys.argv[0].replace("tests/python/module_test.py",
                                                                  "examples/pytorch_pick_configuration.py"),
                          "--machine", "skylake-8180", "--steps", "0"],
                         capture_output=True, text=True, env={"PYTHONPATH": build + "/python"}, check=False)
check(example.returncode == 0 and example.stdout.startswith("dnntune: "),
      "the PyTorch example picks its configuration: " + example.stdout.strip()[:60] + example.stderr[-300:])
