"""dnntune.observe — records a user's own PyTorch training job, so that dnntune learns from it.

    import dnntune
    with dnntune.observe("resnet152", batch=32) as job:      # or observe(model=net, batch=32)
        for images, labels in loader:
            ...                                               # forward, backward, optimizer step
            job.step()

or without `with`: job = dnntune.observe(...); job.step() per step; job.close() at the end (on every
rank: closing gathers the ranks' times). The setup is read from the environment the launch lines
of `dnntune recommend --format mpirun|torchrun|slurm` set (ranks per node, nodes, threads, the
allocator, the fabric (DNNTUNE_FABRIC), on a GPU the precision and memory format); the steps after a warm-up are timed;
rank 0 appends one record (schema dnntune.measurement, kind job) to the file DNNTUNE_JOB_RECORD
names, else to this machine's jobs file in the cache (CACHE/jobs/FINGERPRINT.jsonl), which
`dnntune jobs` lists. A job that cannot be recorded (too short, a rank missing, times no machine
gives, recorded before) says why on standard error and leaves every file as it was: the training
itself is never stopped by the hook.

Per step the hook reads one clock and appends to a list; the rest happens at close().
"""
import fcntl
import json
import math
import os
import shutil
import socket
import stat
import statistics
import subprocess
import sys
import time

__all__ = ["observe", "Job", "DEFAULT_WARMUP_STEPS", "MIN_TIMED_STEPS"]

DEFAULT_WARMUP_STEPS = 5  # untimed: first-touch allocations, caches, DDP's bucket rebuild
MIN_TIMED_STEPS = 5       # fewer timed steps give no median worth a record
DEFAULT_BUCKET_MB = 25    # DistributedDataParallel's bucket_cap_mb (records::kDefaultBucketMegabytes)

# torchvision's ResNets by block kind and blocks per stage (torchvision/models/resnet.py).
_RESNETS = {
    ("BasicBlock", (2, 2, 2, 2)): "resnet18",
    ("BasicBlock", (3, 4, 6, 3)): "resnet34",
    ("Bottleneck", (3, 4, 6, 3)): "resnet50",
    ("Bottleneck", (3, 4, 23, 3)): "resnet101",
    ("Bottleneck", (3, 8, 36, 3)): "resnet152",
}


def _say(text):
    print("dnntune: " + text, file=sys.stderr, flush=True)


def network_of_model(model):
    """The zoo name of a torchvision network (DistributedDataParallel's wrapper looked through);
    ValueError for any other module: the name is never guessed."""
    module = getattr(model, "module", model)
    kind = type(module).__name__
    if kind == "ResNet":
        stages = tuple(len(getattr(module, "layer%d" % index)) for index in range(1, 5))
        name = _RESNETS.get((type(module.layer1[0]).__name__, stages))
    elif kind == "Inception3":
        name = "inception_v3" if getattr(module, "AuxLogits", None) is not None else "inception_v3_noaux"
    elif kind == "VGG":
        layers = [type(layer).__name__ for layer in module.features]
        name = "vgg16" if layers.count("Conv2d") == 13 and "BatchNorm2d" not in layers else None
    else:
        name = {"AlexNet": "alexnet", "MobileNetV2": "mobilenet_v2"}.get(kind)
    if name is None:
        raise ValueError("dnntune.observe: cannot tell which network a %s is: give its name, "
                         "e.g. observe(\"resnet50\", batch=32)" % kind)
    return name


def _environment_int(*names):
    """The first of the variables that is set, as a whole number above 0 (None when none is set)."""
    for name in names:
        text = os.environ.get(name)
        if text:
            try:
                value = int(text.split("(")[0])  # SLURM_TASKS_PER_NODE: "2(x4)"
            except ValueError:
                raise ValueError("dnntune.observe: %s=%r is not a whole number" % (name, text))
            if value < 1:
                raise ValueError("dnntune.observe: %s=%r must be at least 1" % (name, text))
            return value
    return None


def _launcher():
    if "LOCAL_WORLD_SIZE" in os.environ or "TORCHELASTIC_RUN_ID" in os.environ:
        return "torchrun"
    if "OMPI_COMM_WORLD_SIZE" in os.environ or "PMI_SIZE" in os.environ:
        return "mpirun"
    if "SLURM_PROCID" in os.environ:
        return "slurm"
    return "none"


def _distributed():
    """torch.distributed when the script initialised it, else None (torch is never imported here)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    distributed = getattr(torch, "distributed", None)
    if distributed is None or not distributed.is_available() or not distributed.is_initialized():
        return None
    return distributed


def _layout():
    """ranks, rank, ranks per node and nodes, from torch.distributed and the launchers' variables."""
    distributed = _distributed()
    ranks = distributed.get_world_size() if distributed else (
        _environment_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS") or 1)
    rank = distributed.get_rank() if distributed else int(
        os.environ.get("RANK") or os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ.get("SLURM_PROCID") or 0)
    nodes = _environment_int("SLURM_JOB_NUM_NODES", "SLURM_NNODES")
    per_node = _environment_int("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE")
    if per_node is None:
        per_node = ranks // nodes if nodes else ranks
    if nodes is None:
        nodes = max(1, ranks // per_node)
    if per_node * nodes != ranks:
        raise ValueError("dnntune.observe: %d rank(s) are not %d per node on %d node(s): the launcher's "
                         "variables disagree" % (ranks, per_node, nodes))
    return ranks, rank, per_node, nodes


def _threads():
    if os.environ.get("OMP_NUM_THREADS"):
        return _environment_int("OMP_NUM_THREADS")
    torch = sys.modules.get("torch")
    return torch.get_num_threads() if torch is not None else 1


def _allocator():
    """The variant the launch line loaded (DNNTUNE_ALLOCATOR), "default" when nothing replaces
    glibc's, "unnamed" when something does that the launch line did not name."""
    if os.environ.get("DNNTUNE_ALLOCATOR"):
        return os.environ["DNNTUNE_ALLOCATOR"]
    changed = os.environ.get("LD_PRELOAD") or any(name.startswith("MALLOC_") for name in os.environ)
    return "unnamed" if changed else "default"


def _machine_fingerprint():
    """This machine's fingerprint, as the dnntune command computes it (`dnntune probe --quick`)."""
    executable = os.environ.get("DNNTUNE_EXECUTABLE") or shutil.which("dnntune")
    if not executable:
        raise RuntimeError("no dnntune command to tell this machine's fingerprint (set DNNTUNE_EXECUTABLE "
                           "or put dnntune on the PATH)")
    from ._dnntune import fingerprint_arguments  # the option names are the command's (its option rows)
    done = subprocess.run([executable] + list(fingerprint_arguments), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError("`dnntune probe --quick` failed: " + done.stderr.strip())
    return json.loads(done.stdout)["fingerprint"]


def _cache_directory():
    # As pipeline::cache_directory() (pipeline/default_calibration.hpp).
    if os.environ.get("DNNTUNE_CACHE_DIR"):
        return os.environ["DNNTUNE_CACHE_DIR"]
    if os.environ.get("XDG_CACHE_HOME"):
        return os.path.join(os.environ["XDG_CACHE_HOME"], "dnntune")
    return os.path.join(os.path.expanduser("~"), ".cache", "dnntune")


class NotRecorded(Exception):
    """Why a job could not be recorded (said on standard error, never raised out of close())."""


def _check_rank_times(gathered):
    """Every rank's timed steps: refuses missing ranks and times no machine gives, by rank."""
    missing = [str(rank) for rank, times in enumerate(gathered) if not times]
    if missing:
        raise NotRecorded("rank(s) %s sent no step times (a rank died, closed early or ran too few steps)"
                          % ", ".join(missing))
    for rank, times in enumerate(gathered):
        bad = [value for value in times if not (isinstance(value, float) and math.isfinite(value) and 0 < value <= 1e6)]
        if bad:
            raise NotRecorded("rank %d timed a step of %r s, a time no machine gives" % (rank, bad[0]))


def _append_record(path, record):
    """Appends one line under PATH.lock (flock, as the cache's FileLock), refusing a job recorded
    before (same id and ranks); an existing file is never cut: a last line cut short by a kill is
    ended, not overwritten, so that this record stays a line of its own."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                             0o644)
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise NotRecorded(path + " is not a regular file; job records are appended to a regular file only")
            existing = b""
            while True:
                chunk = os.read(descriptor, 1 << 20)
                if not chunk:
                    break
                existing += chunk
            ranks = len(record["job"]["rank_median_seconds"])
            for line in existing.decode("utf-8", "replace").splitlines():
                try:
                    other = json.loads(line)
                    same = (other.get("kind") == "job" and other["job"]["id"] == record["job"]["id"]
                            and len(other["job"]["rank_median_seconds"]) == ranks)
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue  # `dnntune jobs` names a damaged line; it is no record of this job
                if same:
                    raise NotRecorded("job %s with %d rank(s) is recorded in %s already"
                                      % (record["job"]["id"], ranks, path))
            ended = "" if not existing or existing.endswith(b"\n") else "\n"  # a cut line stays its own
            text = ended + json.dumps(record, allow_nan=False) + "\n"
            data = text.encode()
            size_before = len(existing)
            try:
                written = os.write(descriptor, data)
                if written != len(data):
                    raise OSError("a short write (disk full?)")
                os.fsync(descriptor)
            except OSError:
                os.ftruncate(descriptor, size_before)  # only what this write added
                raise
        finally:
            os.close(descriptor)
    finally:
        os.close(lock)


class Job:
    """One training job: step() after every step, close() at the end (both on every rank)."""

    def __init__(self, network=None, batch=None, model=None, warmup_steps=DEFAULT_WARMUP_STEPS, job_id=None,
                 device=None):
        if network is None and model is None:
            raise ValueError("dnntune.observe: give the network's name or model=, e.g. observe(\"resnet50\", batch=32)")
        self.network = network if network is not None else network_of_model(model)
        if batch is None:
            batch = _environment_int("DNNTUNE_BATCH_PER_PROCESS")
            if batch is None:
                raise ValueError("dnntune.observe: give batch= (the batch per process) "
                                 "or set DNNTUNE_BATCH_PER_PROCESS")
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError("dnntune.observe: batch must be a whole number of at least 1, not %r" % (batch,))
        if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int) or warmup_steps < 0:
            raise ValueError("dnntune.observe: warmup_steps must be a whole number >= 0, not %r" % (warmup_steps,))
        self.batch = batch
        self.warmup_steps = warmup_steps
        self.job_id = job_id
        if device is None and model is not None:
            parameter = next(iter(model.parameters()), None)
            device = parameter.device.type if parameter is not None else "cpu"
        self.device = device or "cpu"
        if self.device not in ("cpu", "cuda"):
            raise ValueError("dnntune.observe: device must be cpu or cuda, not %r" % (self.device,))
        self.record_path = None  # where the record went, once recorded
        self._started = time.time()
        self._last = time.perf_counter()
        self._seconds = []
        self._closed = False

    def step(self):
        """Call once at the end of every training step."""
        now = time.perf_counter()
        self._seconds.append(now - self._last)
        self._last = now

    def __enter__(self):
        self._last = time.perf_counter()
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self.close()
        else:
            self._closed = True
            _say("job not recorded: the training raised %s" % kind.__name__)
        return False

    def close(self):
        """Gathers the ranks' times (a collective when torch.distributed is up: call it on every rank)
        and rank 0 records the job. Returns the record's file, or None (the reason on standard error)."""
        if self._closed:
            return self.record_path
        self._closed = True
        try:
            self.record_path = self._record()
        except (NotRecorded, ValueError, RuntimeError, OSError, subprocess.SubprocessError) as why:
            _say("job not recorded: %s" % why)
        return self.record_path

    def _timed(self):
        timed = self._seconds[self.warmup_steps:]
        return timed if len(timed) >= MIN_TIMED_STEPS else None

    def _gathered(self, ranks):
        mine = self._timed()
        distributed = _distributed()
        if distributed is None:
            if ranks > 1:
                raise NotRecorded("%d ranks but torch.distributed is not initialised: their times cannot be gathered"
                                  % ranks)
            gathered = [mine]
        else:
            gathered = [None] * ranks
            try:
                distributed.all_gather_object(gathered, mine)
            except Exception as why:  # a rank that died fails the collective on the others
                raise NotRecorded("the ranks' times could not be gathered (a rank died?): %s" % why)
        return gathered

    def _record(self):
        ranks, rank, per_node, nodes = _layout()
        gathered = self._gathered(ranks)
        if rank != 0:
            return None
        if not any(gathered):
            raise NotRecorded("%d step(s) ran, fewer than %d warm-up and %d timed" %
                              (len(self._seconds), self.warmup_steps, MIN_TIMED_STEPS))
        _check_rank_times(gathered)
        record = self._record_of(gathered, per_node, nodes)
        path = os.environ.get("DNNTUNE_JOB_RECORD") or os.path.join(
            _cache_directory(), "jobs", record["machine_fingerprint"] + ".jsonl")
        _append_record(path, record)
        predicted = record["job"]["predicted_images_per_second"]
        _say("job %s recorded in %s: %.4g images/s%s" % (
            record["job"]["id"], path, per_node * nodes * self.batch / record["median_seconds"],
            " (predicted %.4g)" % predicted if predicted else ""))
        return path

    def _predicted(self):
        """The launch line's prediction, when it was made for this network and batch."""
        text = os.environ.get("DNNTUNE_PREDICTED_IMAGES_PER_SECOND")
        if not text or os.environ.get("DNNTUNE_NETWORK") != self.network or \
                os.environ.get("DNNTUNE_BATCH_PER_PROCESS") != str(self.batch):
            return 0.0
        try:
            value = float(text)
        except ValueError:
            return 0.0
        return value if math.isfinite(value) and value > 0 else 0.0

    def _job_id(self):
        if self.job_id:
            return str(self.job_id)
        if os.environ.get("DNNTUNE_JOB_ID"):
            return os.environ["DNNTUNE_JOB_ID"]
        if os.environ.get("SLURM_JOB_ID"):
            step = os.environ.get("SLURM_STEP_ID")
            return os.environ["SLURM_JOB_ID"] + ("." + step if step else "")
        return "%s-%d-%d" % (socket.gethostname(), os.getpid(), int(self._started))

    def _record_of(self, gathered, per_node, nodes):
        steps = min(len(times) for times in gathered)
        slowest = [max(times[index] for times in gathered) for index in range(steps)]  # DDP waits for it
        mean = statistics.mean(slowest)
        torch = sys.modules.get("torch")
        cuda = self.device == "cuda"
        record = {
            "schema": "dnntune.measurement", "schema_version": 2, "kind": "job",
            "backend": "torch-cuda" if cuda else "torch",
            "backend_version": "PyTorch " + torch.__version__ if torch is not None else "PyTorch unknown",
            "machine_fingerprint": _machine_fingerprint(),
            "network": self.network, "descriptor": "allreduce" if len(gathered) > 1 else "single",
            "pass": "iteration", "batch": self.batch, "message_bytes": 0,
            "threads": _threads(), "smt": os.environ.get("OMP_PLACES") == "threads",
            "processes": per_node, "nodes": nodes, "cpu_sets": [],
            "status": "ok", "reason": "",
            "median_seconds": statistics.median(slowest),
            "coefficient_of_variation": statistics.pstdev(slowest) / mean if mean > 0 else 0.0,
            "min_seconds": min(slowest), "max_seconds": max(slowest), "repetitions": steps,
            "allocator": _allocator(),
            "precision": os.environ.get("DNNTUNE_PRECISION", "fp32") if cuda else "fp32",
            "memory_format": os.environ.get("DNNTUNE_MEMORY_FORMAT", "contiguous") if cuda else "contiguous",
            "trainer": "python", "warmup_steps": self.warmup_steps, "steps": steps,
            "bucket_megabytes": float(os.environ.get("DNNTUNE_DDP_BUCKET_MB") or DEFAULT_BUCKET_MB),
            "job": {"id": self._job_id(), "launcher": _launcher(), "device": self.device,
                    "rank_median_seconds": [statistics.median(times) for times in gathered],
                    "predicted_images_per_second": self._predicted()},
            "command": "", "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        if os.environ.get("DNNTUNE_FABRIC"):  # the fabric the launch line named: its jobs fit its terms
            record["job"]["fabric"] = os.environ["DNNTUNE_FABRIC"]
        return record


def observe(network=None, batch=None, model=None, warmup_steps=DEFAULT_WARMUP_STEPS, job_id=None, device=None):
    """A Job timing this training script's steps: observe("resnet50", batch=32), or
    observe(model=net, batch=32) for a torchvision network (its name read from its class). batch
    is per process (default: DNNTUNE_BATCH_PER_PROCESS, as the launch lines set it)."""
    return Job(network=network, batch=batch, model=model, warmup_steps=warmup_steps, job_id=job_id, device=device)
