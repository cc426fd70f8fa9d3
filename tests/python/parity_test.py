#!/usr/bin/python3
"""tests/python/parity_test.py DNNTUNE BUILD_DIR SOURCE_DIR — one answer wherever it is asked (issue 59):
on a calibration with allocator anchors and PyTorch-timed setups whose runs overturn the tuner's
tie-break (tests/fixtures/parity/), `dnntune recommend --json` and `dnntune.Model().recommend()` are the
same whole document, predict's and scale's default setup is recommend's pick with its allocator, and
predict's figure for that setup (under its allocator too) is recommend's; a recorded job of the pick's
setup that ran outside its band is named alike by the command and the module (recommend and predict),
one inside it by neither; on a GPU machine the command's and the module's documents are equal as well."""
import json
import os
import subprocess
import sys

dnntune_command, build, source = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, build + "/python")
import command_checks  # noqa: E402  (beside this script)
from command_checks import check  # noqa: E402

os.environ["DNNTUNE_CACHE_DIR"] = command_checks.temporary_directory("dnntune-parity-cache-")  # nothing calibrated
import dnntune  # noqa: E402

calibration = source + "/tests/fixtures/parity/calibration.json"


def command_json(*arguments):
    return command_checks.command_json(dnntune_command, *arguments)


def layout(configuration):
    return (configuration["processes_per_node"], configuration["threads_per_process"], configuration["smt"])


model = dnntune.Model(calibration=calibration)
recommended = command_json("recommend", "--model", "resnet18", "--batch", "8", "--calibration", calibration)
check(model.recommend("resnet18", batches=[8]) == recommended,
      "Model().recommend() is `dnntune recommend --json`, the whole document (allocator and basis included)")

# The fixture is one where the bare tuner and the whole answer part: PyTorch timed 2x1 faster than
# the tie-break's pick 1x2 under glibc-tuned, and those runs decide. Under --allocator default they
# do not count (they ran under glibc-tuned), so the tie-break's pick stands.
pick = recommended["best"]["configuration"]
check(layout(pick) == (2, 1, False) and "timed by PyTorch" in recommended["choice_note"],
      "the fixture's PyTorch runs decide the close call: " + recommended["choice_note"][:90])
check(recommended["allocator"]["chosen"] == "glibc-tuned", "the fixture's allocator anchors pick glibc-tuned")
under_default = command_json("recommend", "--model", "resnet18", "--batch", "8", "--calibration", calibration,
                             "--allocator", "default")
check(layout(under_default["best"]["configuration"]) == (1, 2, False),
      "without those runs (--allocator default) the tie-break's 1x2 stands: the fixture changes the layout")
check(model.recommend("resnet18", batches=[8], allocator="default") == under_default,
      "Model().recommend(allocator=) is `recommend --allocator` as well")

predicted = command_json("predict", "--model", "resnet18", "--batch", "8", "--calibration", calibration)
check(model.predict("resnet18", batch=8) == predicted, "Model().predict() is `dnntune predict --json`")
check(predicted["configuration"] == pick, "predict's default layout is recommend's pick")
check(predicted["images_per_second"] == recommended["best"]["images_per_second"] and
      predicted["band"] == recommended["best"]["band"],
      "predict's figure for the recommended setup is recommend's: %.2f images/s" % predicted["images_per_second"])
check(predicted["allocator"] == recommended["allocator"],
      "predict's allocator is recommend's, its gain and the figure under it included")

scaled = command_json("scale", "--model", "resnet18", "--batch", "8", "--nodes", "1..4", "--calibration", calibration)
check(model.scale("resnet18", batch=8, nodes="1..4") == scaled, "Model().scale() is `dnntune scale --json`")
check(layout(scaled["rows"][0]["configuration"]) == layout(pick) and scaled["allocator"] == recommended["allocator"],
      "scale's default setup is recommend's pick with its allocator")

asked = command_json("predict", "--model", "resnet18", "--batch", "8", "--calibration", calibration, "--ppn", "1",
                     "--threads", "2", "--allocator", "jemalloc")
check(model.predict("resnet18", batch=8, processes_per_node=1, threads_per_process=2, allocator="jemalloc") == asked
      and asked["allocator"]["chosen"] == "jemalloc" and asked["allocator"]["chosen_by"] == "user",
      "a given layout and allocator: the module's predict() is the command's")


def job_record(job_id, processes, threads, allocator, images_per_second):
    """A job of resnet18 b8 as dnntune.observe records it, on the fixture calibration's machine."""
    step = processes * 8 / images_per_second
    return {"schema": "dnntune.measurement", "schema_version": 2, "kind": "job", "backend": "torch",
            "backend_version": "PyTorch 1.13.0", "machine_fingerprint": fingerprint, "network": "resnet18",
            "descriptor": "single" if processes == 1 else "allreduce", "pass": "iteration", "batch": 8,
            "message_bytes": 0, "threads": threads, "smt": False, "processes": processes, "nodes": 1,
            "cpu_sets": [], "status": "ok", "reason": "", "median_seconds": step, "coefficient_of_variation": 0.01,
            "min_seconds": step, "max_seconds": step, "repetitions": 20, "allocator": allocator,
            "precision": "fp32", "memory_format": "contiguous", "trainer": "python", "warmup_steps": 5,
            "steps": 20, "bucket_megabytes": 25.0,
            "job": {"id": job_id, "launcher": "torchrun", "device": "cpu", "rank_median_seconds": [step] * processes,
                    "predicted_images_per_second": 0.0},
            "command": "", "timestamp": "2026-12-07T10:00:00Z"}


# A job of the pick's setup far above its band (so that, competing as PyTorch's runs do, it keeps the
# pick) and one inside it: both front ends name the first and not the second, in recommend and predict.
fingerprint = json.load(open(calibration))["machine"]["fingerprint"]
low, high = recommended["best"]["band"]["low"], recommended["best"]["band"]["high"]
jobs_file = command_checks.temporary_directory("dnntune-parity-jobs-") + "/jobs.jsonl"
with open(jobs_file, "w") as jobs:
    for record in (job_record("fast", 2, 1, "glibc-tuned", 1.5 * high),
                   job_record("inside", 2, 1, "glibc-tuned", (low + high) / 2)):
        jobs.write(json.dumps(record) + "\n")
os.environ["DNNTUNE_JOB_RECORD"] = jobs_file  # read at each answer, by the command and the module alike
with_jobs = command_json("recommend", "--model", "resnet18", "--batch", "8", "--calibration", calibration)
check(model.recommend("resnet18", batches=[8]) == with_jobs, "with recorded jobs, Model().recommend() is the command's")
named = [job["id"] for job in with_jobs.get("contradicting_jobs", [])]
check(layout(with_jobs["best"]["configuration"]) == layout(pick) and named == ["fast"],
      "recommend names the job outside its band, not the one inside: %s" % named)
predicted_with_jobs = command_json("predict", "--model", "resnet18", "--batch", "8", "--calibration", calibration)
check(model.predict("resnet18", batch=8) == predicted_with_jobs and
      [job["id"] for job in predicted_with_jobs.get("contradicting_jobs", [])] == ["fast"],
      "predict names it too, the module as the command")
del os.environ["DNNTUNE_JOB_RECORD"]

gpu = dnntune.Model(machine="h200")
check(gpu.recommend("resnet50", batches=[32, 64], precision=["tf32", "bf16"]) ==
      command_json("recommend", "--model", "resnet50", "--machine", "h200", "--batch", "32,64", "--precision",
                   "tf32,bf16"),
      "GPU: Model().recommend() is `dnntune recommend --machine h200 --json`")
check(gpu.predict("resnet50", gpus=8, batch=64, precision="bf16", memory_format="channels_last") ==
      command_json("predict", "--model", "resnet50", "--machine", "h200", "--gpus", "8", "--batch", "64",
                   "--precision", "bf16", "--memory-format", "channels_last"),
      "GPU: Model().predict() is `dnntune predict --machine h200 --json`")
check(gpu.scale("resnet50", gpus=8, nodes="1..8") ==
      command_json("scale", "--model", "resnet50", "--machine", "h200", "--gpus", "8", "--nodes", "1..8"),
      "GPU: Model().scale() is `dnntune scale --machine h200 --json`")
refused = subprocess.run([dnntune_command, "predict", "--model", "resnet50", "--machine", "h200", "--allocator",
                          "jemalloc"], capture_output=True, text=True, check=False)
check(refused.returncode == 2 and "--allocator is chosen for CPU nodes" in refused.stderr,
      "GPU: --allocator is refused by predict as by recommend: " + refused.stderr.strip()[:80])
