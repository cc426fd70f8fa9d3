"""dnntune — the measured performance model and autotuner for DNN training, from Python.

    import dnntune
    model = dnntune.Model(calibration="calibration.json")     # this machine (`dnntune fit`)
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
ValueError with the command's message.
"""
import json

from ._dnntune import GpuModel as _NativeGpuModel
from ._dnntune import Model as _NativeModel
from ._dnntune import machine_kind as _machine_kind

__all__ = ["Model"]

_GPU_ONLY = ("gpus", "fusion_mb", "precision", "memory_format")
_CPU_ONLY = ("processes_per_node", "threads_per_process", "smt", "consider_smt")


def _as_list(value):
    """None, one word or a list of words, as a list."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _refuse(given, names, why):
    wrong = [name for name in names if given.get(name) is not None]
    if wrong:
        raise ValueError(", ".join(wrong) + ": " + why)


class Model:
    """A calibrated machine (calibration=FILE) or a spec machine (machine=NAME|FILE.json); on a GPU
    machine (k80, p100, v100, a100, h100, h200 or a GPU profile) calibration= is a `dnntune fit
    --backend torch-cuda` file and the configuration is gpus and batch per GPU."""

    def __init__(self, calibration=None, machine=None, backend="torch"):
        self.kind = _machine_kind(machine) if machine is not None else "cpu"
        if self.kind == "gpu":
            self._native = _NativeGpuModel(machine=machine, calibration=calibration)
        else:
            self._native = _NativeModel(calibration=calibration, machine=machine, backend=backend)

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

    def _threads(self, processes_per_node, threads_per_process):
        processes = processes_per_node or 1
        return processes, threads_per_process or max(1, self.cores // processes)

    def predict(self, network, processes_per_node=None, threads_per_process=None, batch=32, nodes=1, smt=None,
                fabric="edr", gpus=None, fusion_mb=None, precision=None, memory_format=None):
        """One configuration: images/s with its band, iteration terms, scaling efficiency. On a GPU,
        precision= "fp32", "tf32", "bf16" or "fp16" (default: the GPU's PyTorch default, TF32 where it
        has it) and memory_format= "contiguous" or "channels_last"."""
        self._check(locals())
        if self.kind == "gpu":
            return json.loads(self._native.predict_json(network, gpus or 1, batch, nodes, fusion_mb or 25.0, fabric,
                                                        precision or "", memory_format or ""))
        processes, threads = self._threads(processes_per_node, threads_per_process)
        return json.loads(self._native.predict_json(network, processes, threads, batch, nodes, bool(smt), fabric))

    def scale(self, network, processes_per_node=None, threads_per_process=None, batch=32, nodes="1..1024", smt=None,
              fabric="edr", gpus=None, fusion_mb=None, precision=None, memory_format=None):
        """Predictions over node counts ("1..1024", "1,2,4" or "16"), with speed-up and efficiency."""
        self._check(locals())
        if self.kind == "gpu":
            return json.loads(self._native.scale_json(network, gpus or 1, batch, str(nodes), fusion_mb or 25.0, fabric,
                                                      precision or "", memory_format or ""))
        processes, threads = self._threads(processes_per_node, threads_per_process)
        return json.loads(self._native.scale_json(network, processes, threads, batch, str(nodes), bool(smt), fabric))

    def recommend(self, network, batches=None, nodes="1", consider_smt=None, fabric="edr", gpus=None,
                  fusion_mb=None, precision=None, memory_format=None):
        """The fastest configuration with baselines and ranking: processes per node, threads, SMT and
        batch on a CPU machine (batches default to 32); GPUs per node, batch per GPU and DDP bucket
        size on a GPU machine (defaults as `dnntune recommend`: 1, 2, 4 ... GPUs, batches 32, 64, 128), and
        precision and memory_format (lists; default every precision the GPU has, both formats)."""
        self._check(locals())
        if self.kind == "gpu":
            return json.loads(self._native.recommend_json(network, list(gpus or []), list(batches or []),
                                                          [float(size) for size in (fusion_mb or [])], str(nodes),
                                                          fabric, _as_list(precision), _as_list(memory_format)))
        return json.loads(self._native.recommend_json(network, list(batches or (32,)), str(nodes),
                                                      consider_smt is not False, fabric))
