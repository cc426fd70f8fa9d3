#!/usr/bin/python3
"""tests/schemas/validate_outputs.py DNNTUNE SOURCE_DIR — every reporting command's JSON output
validates against its JSON Schema in schemas/ (Debian's python3-jsonschema): predict, scale,
recommend (--json and its alias --format json; CPU and GPU machines), compare, machines, jobs, models,
models show, probe --machine for spec machines, calibrate --report --modules, and train (with --module-times) and validate for real on the recorded tiny network (this machine's
calibration from a recorded first run seeded into a temporary cache: tests/fixtures/seed_cache.py)."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import jsonschema

dnntune, source = sys.argv[1], pathlib.Path(sys.argv[2])
schemas = {}
for path in sorted((source / "schemas").glob("*.schema.json")):
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    schemas[schema["$id"]] = schema
resolver_store = dict(schemas)


def validate(arguments):
    run = subprocess.run([dnntune] + arguments, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"FAILED: dnntune {' '.join(arguments)} exited {run.returncode}: {run.stderr.strip()}")
    document = json.loads(run.stdout)
    kind = document.get("schema")
    if kind not in schemas:
        sys.exit(f"FAILED: dnntune {' '.join(arguments)}: no schema file for {kind!r}")
    resolver = jsonschema.RefResolver.from_schema(schemas[kind], store=resolver_store)
    try:
        jsonschema.Draft202012Validator(schemas[kind], resolver=resolver).validate(document)
    except jsonschema.ValidationError as error:
        sys.exit(f"FAILED: dnntune {' '.join(arguments)}: {error.message} at {list(error.absolute_path)}")
    print(f"ok: dnntune {' '.join(arguments)} -> {kind} v{document['schema_version']}")
    return document


def validate_file(path, made_by):
    document = json.loads(pathlib.Path(path).read_text())
    kind = document.get("schema")
    if kind not in schemas:
        sys.exit(f"FAILED: {path} ({made_by}): no schema file for {kind!r}")
    try:
        jsonschema.Draft202012Validator(schemas[kind]).validate(document)
    except jsonschema.ValidationError as error:
        sys.exit(f"FAILED: {path} ({made_by}): {error.message} at {list(error.absolute_path)}")
    print(f"ok: {made_by} -> {kind} v{document['schema_version']}")


spec = ["--machine", "skylake-8180"]
validate(["machines", "--json"])
# dnntune jobs: one job of this machine (its fingerprint from probe --quick), as dnntune.observe writes it.
jobs_file = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"dnntune-schemas-jobs-{os.getpid()}.jsonl")
fingerprint = json.loads(subprocess.run([dnntune, "probe", "--quick", "--json"], capture_output=True, text=True,
                                        check=True).stdout)["fingerprint"]
pathlib.Path(jobs_file).write_text(json.dumps({
    "schema": "dnntune.measurement", "schema_version": 2, "kind": "job", "backend": "torch",
    "backend_version": "PyTorch 1.13.1", "machine_fingerprint": fingerprint, "network": "resnet18",
    "descriptor": "allreduce", "pass": "iteration", "batch": 8, "message_bytes": 0, "threads": 1, "smt": False,
    "processes": 2, "nodes": 1, "cpu_sets": [], "status": "ok", "reason": "", "median_seconds": 0.9,
    "coefficient_of_variation": 0.02, "min_seconds": 0.88, "max_seconds": 0.95, "repetitions": 10,
    "trainer": "python", "warmup_steps": 5, "steps": 10, "bucket_megabytes": 25,
    "job": {"id": "schemas", "launcher": "torchrun", "device": "cpu", "rank_median_seconds": [0.89, 0.9],
            "predicted_images_per_second": 16.5}, "command": "", "timestamp": "2026-12-07T10:00:00Z"}) + "\n")
try:
    validate(["jobs", "--jobs-file", jobs_file, "--calibration", str(source / "data/reference_calibrations/torch.json"),
              "--json"])
finally:
    os.remove(jobs_file)
validate(["predict", "--model", "resnet50", "--ppn", "2", "--threads", "28", "--nodes", "4", "--json"] + spec)
validate(["predict", "--model", "resnet50", "--ppn", "4", "--threads", "14", "--nodes", "8", "--ps", "2", "--json"] + spec)
validate(["scale", "--model", "resnet152", "--ppn", "2", "--threads", "28", "--nodes", "1..64", "--json"] + spec)
# The document's form is tested, not the network: a spec recommend bands every candidate, seconds of
# ResNet-152's or Inception's layers apiece, a fraction of that of ResNet-18's.
validate(["recommend", "--model", "resnet18", "--nodes", "16", "--json"] + spec)
validate(["recommend", "--model", "resnet18", "--batch", "32,64", "--format", "json", "--explain"] + spec)
validate(["recommend", "--model", "resnet50", "--objective", "time-to-train", "--json", "--consider-ps"] + spec)
tiny = str(source / "tests/fixtures/tiny_network.json")
validate(["recommend", "--model", tiny, "--json"] + spec)
gpu = ["--machine", "v100"]
validate(["predict", "--model", "resnet50", "--gpus", "8", "--batch", "64", "--nodes", "2", "--json"] + gpu)
validate(["scale", "--model", "resnet152", "--gpus", "8", "--nodes", "1..16", "--json"] + gpu)
validate(["recommend", "--model", "resnet152", "--nodes", "1,4", "--json", "--explain", "--machine", "k80"])
validate(["predict", "--model", "resnet50", "--machine", "h200", "--batch", "256", "--precision", "bf16",
          "--memory-format", "channels_last", "--json"])
validate(["recommend", "--model", "resnet50", "--machine", "h200", "--gpus", "1,8", "--json"])
validate(["compare", "--model", "resnet18", "--machine", "skylake-8180", "--machine", "k80", "--machine", "v100",
          "--json"])
# A GPU calibration, fitted to the recorded CPU micro-runs relabelled as torch-cuda ones (the
# numbers do not matter here, the format does).
gpu_records = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"dnntune-gpu-records-{os.getpid()}.jsonl")
with open(source / "tests/fixtures/anchored_resnet18_calibration/layers.jsonl") as recorded, open(gpu_records, "w") as out:
    for line in recorded:
        record = json.loads(line)
        record["backend"] = "torch-cuda"
        record["median_seconds"] /= 100
        out.write(json.dumps(record) + "\n")
try:
    validate(["fit", gpu_records, "--backend", "torch-cuda", "--machine", "h200", "--json"])
finally:
    os.remove(gpu_records)
validate(["models", "--json"])
validate(["models", "show", "inception_v3", "--json"])
validate(["probe", "--machine", "epyc-7551", "--json"])
validate(["train", "--model", tiny, "--batch", "4", "--iters", "2", "--warmup", "1", "--json"])
# Layers timed inside the step, and the report that sets them against the micro-runs.
modules_directory = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"dnntune-modules-{os.getpid()}")
os.makedirs(modules_directory, exist_ok=True)
try:
    shutil.copy(source / "tests/fixtures/anchored_resnet18_calibration/layers.jsonl", modules_directory)
    validate(["train", "--model", tiny, "--batch", "4", "--iters", "2", "--warmup", "1", "--module-times", "--record",
              os.path.join(modules_directory, "network.jsonl"), "--json"])
    validate(["calibrate", "--report", modules_directory, "--modules", "--json"])
finally:
    shutil.rmtree(modules_directory, ignore_errors=True)
os.environ["DNNTUNE_CACHE_DIR"] = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"dnntune-schemas-{os.getpid()}")
try:
    # The formats are tested here, not what a first run measures in the time a busy machine leaves
    # (tests/cache/concurrent_first_run_test.sh makes a real one): a recorded first run, allocator
    # variants anchored.
    seeded = subprocess.run(["/usr/bin/python3", source / "tests/fixtures/seed_cache.py", dnntune,
                             os.environ["DNNTUNE_CACHE_DIR"]], capture_output=True, text=True, check=False)
    if seeded.returncode != 0:
        sys.exit("FAILED: seeding the cache: " + seeded.stderr.strip())
    validate(["validate", "--model", tiny, "--batch", "4", "--iters", "2", "--warmup", "1", "--json"])
    validate(["predict", "--model", tiny, "--batch", "4", "--json"])  # this machine: measured
    # What a `calibrate --slurm` job does on its node, here from the calibration just made: the
    # node record (CACHE/slurm/nodes/NODE.json).
    node_job = ["calibrate", "--slurm-node-job", "--partition", "schemas", "--model", tiny, "--batch", "4"]
    subprocess.run([dnntune] + node_job, capture_output=True, check=True)
    validate_file(os.path.join(os.environ["DNNTUNE_CACHE_DIR"], "slurm", "nodes", os.uname().nodename + ".json"),
                  "dnntune " + " ".join(node_job))
    # this machine: the allocator variants anchored by the first run, each predicted
    recommendation = validate(["recommend", "--model", tiny, "--batch", "4", "--json", "--explain"])
    if "allocator" not in recommendation:
        sys.exit("FAILED: recommend --json carries no allocator")
    cache = os.environ["DNNTUNE_CACHE_DIR"]
    entries = [name for name in os.listdir(cache) if os.path.isdir(os.path.join(cache, name)) and name != "slurm"]
    if len(entries) != 1:  # a first run would have made this machine's entry beside the seeded one
        sys.exit(f"FAILED: the commands did not answer from the seeded entry alone: {entries}")
finally:
    subprocess.run(["rm", "-rf", os.environ["DNNTUNE_CACHE_DIR"]], check=False)
