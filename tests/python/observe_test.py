#!/usr/bin/python3
"""tests/python/observe_test.py DNNTUNE BUILD_DIR SOURCE_DIR — the training-job hook dnntune.observe
(python/dnntune/observe.py) without torch: a loop of short sleeps records one job (kind job) in
the file DNNTUNE_JOB_RECORD names, and `dnntune jobs --json` (the C++ reader) lists it with the
prediction the launch line carried and the current model's. Bad input: a job too short to time,
a job recorded twice, ranks missing or timing what no machine gives, another machine's record, a
damaged record, a line cut short before the append, and four jobs appending at once: each said,
nothing lost, no file cut."""
import importlib
import json
import os
import subprocess
import sys
import tempfile

dnntune_command, build, source = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, build + "/python")
import dnntune  # noqa: E402
hook = importlib.import_module("dnntune.observe")  # the module (dnntune.observe is the function)

calibration = os.path.join(source, "data", "reference_calibrations", "torch.json")
work = tempfile.mkdtemp(prefix="dnntune-observe-")
record_file = os.path.join(work, "jobs.jsonl")
os.environ.update({"DNNTUNE_EXECUTABLE": dnntune_command, "DNNTUNE_JOB_RECORD": record_file,
                   "DNNTUNE_CACHE_DIR": os.path.join(work, "cache"), "OMP_NUM_THREADS": "1"})
for name in ("WORLD_SIZE", "RANK", "LOCAL_WORLD_SIZE", "SLURM_JOB_ID", "SLURM_NNODES", "SLURM_JOB_NUM_NODES",
             "OMPI_COMM_WORLD_SIZE", "LD_PRELOAD", "DNNTUNE_NETWORK", "DNNTUNE_PREDICTED_IMAGES_PER_SECOND"):
    os.environ.pop(name, None)


def check(condition, what):
    if not condition:
        sys.exit("FAILED: " + what)
    print("ok: " + what)


def jobs(*arguments):
    run = subprocess.run([dnntune_command, "jobs", "--jobs-file", record_file, "--calibration", calibration, "--json",
                          *arguments], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("FAILED: dnntune jobs exited %d: %s" % (run.returncode, run.stderr))
    return json.loads(run.stdout)


def train(steps, **arguments):
    """A training loop of `steps` short sleeps under the hook; returns what close() returned and its message."""
    job = dnntune.observe("resnet18", batch=4, **arguments)
    for _ in range(steps):
        subprocess.run(["sleep", "0.01"])  # a step that takes real time, whatever its length
        job.step()
    return job.close()


def file_bytes():
    with open(record_file, "rb") as recorded:
        return recorded.read()


# One job, with the prediction the recommended launch line set for this network and batch.
os.environ.update({"DNNTUNE_NETWORK": "resnet18", "DNNTUNE_BATCH_PER_PROCESS": "4",
                   "DNNTUNE_PREDICTED_IMAGES_PER_SECOND": "12.5"})
with dnntune.observe("resnet18", batch=4, warmup_steps=2, job_id="first") as job:
    for _ in range(9):
        subprocess.run(["sleep", "0.01"])
        job.step()
check(job.record_path == record_file, "a job of 9 steps (2 warm-up) is recorded in DNNTUNE_JOB_RECORD")
record = json.loads(file_bytes().decode().splitlines()[0])
check(record["schema"] == "dnntune.measurement" and record["kind"] == "job" and record["repetitions"] == 7 and
      record["warmup_steps"] == 2 and len(record["machine_fingerprint"]) == 16,
      "the record is a measurement of kind job: 7 timed steps after 2 warm-up, the machine's fingerprint")
listed = jobs()
check(len(listed["jobs"]) == 1 and listed["jobs"][0]["id"] == "first" and not listed["not_taken"],
      "dnntune jobs lists it, nothing left out")
row = listed["jobs"][0]
check(row["network"] == "resnet18" and row["batch_per_process"] == 4 and row["processes_per_node"] == 1 and
      row["threads_per_process"] == 1 and row["nodes"] == 1 and row["launcher"] == "none",
      "its setup: resnet18, batch 4, 1 process of 1 thread on 1 node")
check(row["predicted_before"] == 12.5 and
      abs(row["error_before"] - (12.5 - row["observed_images_per_second"]) / row["observed_images_per_second"]) < 1e-12,
      "the prediction made before the job is the launch line's, with its error")
check(isinstance(row["predicted_now"], float) and row["predicted_now"] > 0 and row["error_now"] is not None,
      "the current model predicts its setup now")

os.environ["DNNTUNE_NETWORK"] = "resnet50"  # a launch line made for another network: its prediction is not this job's
check(train(8, warmup_steps=1, job_id="other-network") == record_file, "a job under another network's launch line")
check(jobs()["jobs"][-1]["predicted_before"] is None, "carries no prediction made for another network")

before = file_bytes()
check(train(6) is None and file_bytes() == before, "a job of 6 steps (5 warm-up, 5 timed needed) is not recorded")
check(train(8, warmup_steps=1, job_id="first") is None and file_bytes() == before,
      "a job recorded before (same id and ranks) is not recorded twice")
try:
    hook._check_rank_times([[0.1] * 5, None])
    check(False, "a missing rank is refused")
except hook.NotRecorded as why:
    check("rank(s) 1" in str(why), "a rank that sent no times is named: " + str(why))
for bad in (float("nan"), float("inf"), 0.0, -1.0):
    try:
        hook._check_rank_times([[0.1] * 4 + [bad]])
        check(False, "a step of %r s is refused" % bad)
    except hook.NotRecorded as why:
        check("rank 0" in str(why), "a step of %r s is refused: %s" % (bad, why))
os.environ["WORLD_SIZE"] = "2"
check(train(8, warmup_steps=1, job_id="two-ranks") is None and file_bytes() == before,
      "2 ranks without torch.distributed: their times cannot be gathered, not recorded")
del os.environ["WORLD_SIZE"]
try:
    dnntune.observe(batch=4)
    check(False, "no network is refused")
except ValueError as why:
    check("give the network" in str(why), "a job names its network: " + str(why))


class BasicBlock:
    pass


class ResNet:  # torchvision's class, as observe reads it: the blocks of its four stages
    def __init__(self, blocks):
        for index, count in enumerate(blocks, 1):
            setattr(self, "layer%d" % index, [BasicBlock() for _ in range(count)])


check(hook.network_of_model(ResNet((2, 2, 2, 2))) == "resnet18",
      "a torchvision ResNet of 2,2,2,2 basic blocks is resnet18")
try:
    hook.network_of_model(ResNet((1, 1, 1, 1)))
    check(False, "an unknown ResNet is refused")
except ValueError as why:
    check("give its name" in str(why), "a network the class does not tell is never guessed: " + str(why))

# Lines the reader refuses, each by name, and the records around them kept.
good = json.loads(file_bytes().decode().splitlines()[0])
other_machine = dict(good, machine_fingerprint="0123456789abcdef", job=dict(good["job"], id="elsewhere"))
died = dict(good, processes=2, job=dict(good["job"], id="died"))
zero = dict(good, job=dict(good["job"], id="zero", rank_median_seconds=[0.0]))
with open(record_file, "a") as recorded:
    for damaged in (other_machine, died, zero):
        recorded.write(json.dumps(damaged) + "\n")
    recorded.write(json.dumps(good)[:40])  # a writer killed mid-line
listed = jobs()
reasons = "\n".join(listed["not_taken"])
check("of machine 0123456789abcdef, not this one" in reasons, "another machine's job is refused by its fingerprint")
check("a rank died" in reasons and "not a time a machine gives" in reasons,
      "a job missing a rank's times and one with a time of 0 s are refused by name")
check(train(8, warmup_steps=1, job_id="after-cut") == record_file, "a job appends after a line cut short")
lines = file_bytes().decode().splitlines()
check(lines[-2] == json.dumps(good)[:40] and json.loads(lines[-1])["job"]["id"] == "after-cut",
      "the cut line is kept as it was, the new record is a whole line of its own")
check([row["id"] for row in jobs()["jobs"]] == ["first", "other-network", "after-cut"],
      "dnntune jobs lists this machine's three jobs in order")

# Four jobs appending at once: the lock makes them take turns; every record is whole and there.
script = ("import sys; sys.path.insert(0, %r); import dnntune, subprocess\n"
          "job = dnntune.observe('resnet18', batch=4, warmup_steps=1, job_id=sys.argv[1])\n"
          "for _ in range(8):\n    subprocess.run(['sleep', '0.01']); job.step()\n"
          "sys.exit(0 if job.close() else 1)\n") % (build + "/python")
writers = [subprocess.Popen([sys.executable, "-c", script, "at-once-%d" % index]) for index in range(4)]
check(all(writer.wait() == 0 for writer in writers), "four jobs closing at once are all recorded")
ids = [row["id"] for row in jobs()["jobs"]]
check(sorted(ids[3:]) == ["at-once-%d" % index for index in range(4)], "all four records are whole and listed")
subprocess.run(["rm", "-rf", work], check=False)
