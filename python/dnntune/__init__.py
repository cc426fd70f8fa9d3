"""dnntune — the measured performance model and autotuner for DNN training, from Python.

    import dnntune
    model = dnntune.Model()                                    # this machine, from its cached calibration
    model = dnntune.Model(calibration="calibration.json")     # a calibration (`dnntune fit`)
    model = dnntune.Model(machine="skylake-8180")              # a spec machine, built-in reference
    model.predict("resnet50", processes_per_node=2, threads_per_process=14, batch=32, nodes=16)
    model.scale("resnet152", processes_per_node=2, threads_per_process=28, nodes="1..1024")
    model.recommend("resnet152", batches=[32, 64])

    gpu = dnntune.Model(machine="h200")                         # a GPU node: one process per GPU
    gpu.predict("resnet50", gpus=8, batch=64, nodes=2)
    gpu.recommend("resnet152", gpus=[1, 8], batches=[32, 64, 128])

Every result is a plain dict equal to the command's JSON (`dnntune predict|scale|recommend
--json`: schemas dnntune.prediction, dnntune.scaling, dnntune.recommendation; on a GPU machine
dnntune.gpu-prediction, dnntune.gpu-scaling, dnntune.gpu-recommendation). Bad input raises
ValueError with the command's message (a bool where a number is meant and an empty list included).
Without processes_per_node and threads_per_process, predict and scale use the setup `recommend`
picks, its allocator included (the result's "layout_basis" says so), as the command does; predict's
and scale's allocator= is recommend's (None: the one recommended).
Model() without arguments is this machine, as the command without --calibration and --machine: its
cached calibration ($DNNTUNE_CACHE_DIR, references from $DNNTUNE_REFERENCE_DIR), made on first use by
the dnntune command ($DNNTUNE_EXECUTABLE, else `dnntune` on the PATH).
"""
import json
import os
import shutil

from ._dnntune import GpuModel as _NativeGpuModel
from ._dnntune import Model as _NativeModel
from ._dnntune import default_batch as _DEFAULT_BATCH
from ._dnntune import default_fabric as _DEFAULT_FABRIC
from ._dnntune import default_max_minutes  # noqa: F401  (recommend's max_minutes= when not given)
from ._dnntune import default_scale_nodes as _DEFAULT_SCALE_NODES
from ._dnntune import machine_kind as _machine_kind

__all__ = ["Model", "observe", "default_max_minutes"]

_GPU_ONLY = ("gpus", "fusion_mb", "precision", "memory_format")
_CPU_ONLY = ("processes_per_node", "threads_per_process", "smt", "consider_smt", "allocator", "max_minutes")


def _refuse(given, names, why):
    wrong = [name for name in names if given.get(name) is not None]
    if wrong:
        raise ValueError(", ".join(wrong) + ": " + why)


class Model:
    """This machine (no arguments), a calibrated machine (calibration=FILE) or a spec machine
    (machine=NAME|FILE.json); on a GPU machine (a built-in GPU profile or a GPU profile JSON)
    calibration= is a `dnntune fit --backend torch-cuda` file and the configuration is gpus and
    batch per GPU. Every keyword is checked by the command's rules (a bool where a number is meant,
    an empty list, a value out of range: ValueError with the command's message)."""

    def __init__(self, calibration=None, machine=None, backend="torch"):
        self.kind = _machine_kind(machine) if machine is not None else "cpu"
        if self.kind == "gpu":
            self._native = _NativeGpuModel(machine=machine, calibration=calibration)
        else:
            executable = os.environ.get("DNNTUNE_EXECUTABLE") or shutil.which("dnntune")
            self._native = _NativeModel(calibration=calibration, machine=machine, backend=backend,
                                        executable=executable)

    @property
    def cores(self):
        """Cores per node of a CPU machine."""
        if self.kind == "gpu":
            raise ValueError(self.machine + " is a GPU machine: see gpus_per_node")
        return self._native.cores

    @property
    def gpus_per_node(self):
        """GPUs per node of a GPU machine."""
        if self.kind != "gpu":
            raise ValueError(self.machine + " is a CPU machine: see cores")
        return self._native.gpus_per_node

    @property
    def machine(self):
        return self._native.machine

    def _check(self, given):
        if self.kind == "gpu":
            _refuse(given, _CPU_ONLY, "these describe CPU nodes; on a GPU machine give gpus, batch, nodes, fusion_mb")
        else:
            _refuse(given, _GPU_ONLY, "these describe GPU nodes; " + self.machine + " is a CPU machine")

    def predict(self, network, processes_per_node=None, threads_per_process=None, batch=_DEFAULT_BATCH, nodes=1,
                smt=None, fabric=_DEFAULT_FABRIC, gpus=None, fusion_mb=None, precision=None, memory_format=None,
                allocator=None):
        """One configuration: images/s with its band, iteration terms, scaling efficiency, and on a CPU
        machine the setup's allocator (allocator=NAME, default the one recommended; its "variants" carry
        the figure under each). On a GPU, precision= "fp32", "tf32", "bf16" or "fp16" (default: the GPU's
        PyTorch default, TF32 where it has it) and memory_format= "contiguous" or "channels_last"."""
        self._check(locals())
        if self.kind == "gpu":
            return json.loads(self._native.predict_json(network, gpus=gpus, batch=batch, nodes=nodes,
                                                        fusion_megabytes=fusion_mb, fabric=fabric,
                                                        precision=precision, memory_format=memory_format))
        # None: not given, the recommended setup's (frontend/answers.hpp); 0 is refused
        return json.loads(self._native.predict_json(network, processes_per_node=processes_per_node,
                                                    threads_per_process=threads_per_process, batch=batch, nodes=nodes,
                                                    smt=smt, fabric=fabric, allocator=allocator))

    def scale(self, network, processes_per_node=None, threads_per_process=None, batch=_DEFAULT_BATCH,
              nodes=_DEFAULT_SCALE_NODES, smt=None, fabric=_DEFAULT_FABRIC, gpus=None, fusion_mb=None, precision=None,
              memory_format=None, allocator=None):
        """Predictions over node counts ("1..1024", "1,2,4", 16 or a list), with speed-up and efficiency."""
        self._check(locals())
        if self.kind == "gpu":
            return json.loads(self._native.scale_json(network, gpus=gpus, batch=batch, nodes=nodes,
                                                      fusion_megabytes=fusion_mb, fabric=fabric, precision=precision,
                                                      memory_format=memory_format))
        return json.loads(self._native.scale_json(network, processes_per_node=processes_per_node,
                                                  threads_per_process=threads_per_process, batch=batch, nodes=nodes,
                                                  smt=smt, fabric=fabric, allocator=allocator))

    def recommend(self, network, batches=None, nodes=None, consider_smt=None, fabric=_DEFAULT_FABRIC, gpus=None,
                  fusion_mb=None, precision=None, memory_format=None, allocator=None, max_minutes=None):
        """The fastest configuration with baselines and ranking, as `dnntune recommend --json`: processes
        per node, threads, SMT and batch on a CPU machine (batches default to 32, nodes to one), with its allocator
        (allocator=NAME, default the one recommended); GPUs per node, batch per GPU and DDP bucket size
        on a GPU machine (defaults as `dnntune recommend`: 1, 2, 4 ... GPUs, batches 32, 64, 128), and
        precision and memory_format (lists; default every precision the GPU has, both formats). On a CPU
        machine a search estimated past max_minutes (default: dnntune.default_max_minutes, as
        `dnntune recommend --max-minutes`) is refused before it starts."""
        self._check(locals())
        if self.kind == "gpu":
            return json.loads(self._native.recommend_json(network, gpus=gpus, batches=batches,
                                                          fusion_megabytes=fusion_mb, nodes=nodes, fabric=fabric,
                                                          precisions=precision, memory_formats=memory_format))
        return json.loads(self._native.recommend_json(network, batches=batches, nodes=nodes,
                                                      consider_smt=consider_smt, fabric=fabric, allocator=allocator,
                                                      max_minutes=max_minutes))


from .observe import observe  # noqa: E402  (the training-job hook: pure Python, python/dnntune/observe.py)
