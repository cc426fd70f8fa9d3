"""dnntune — the measured performance model and autotuner for DNN training, from Python.

    import dnntune
    model = dnntune.Model(calibration="calibration.json")     # this machine (`dnntune fit`)
    model = dnntune.Model(machine="skylake-8180")              # a spec machine, built-in reference
    model.predict("resnet50", processes_per_node=2, threads_per_process=14, batch=32, nodes=16)
    model.scale("resnet152", processes_per_node=2, threads_per_process=28, nodes="1..1024")
    model.recommend("resnet152", batches=[32, 64])

Every result is a plain dict equal to the command's JSON (`dnntune predict|scale|recommend
--json`: schemas dnntune.prediction, dnntune.scaling, dnntune.recommendation). Bad input raises
ValueError with the command's message.
"""
import json

from ._dnntune import Model as _NativeModel

__all__ = ["Model"]


class Model:
    """A calibrated machine (calibration=FILE) or a spec machine (machine=NAME|FILE.json)."""

    def __init__(self, calibration=None, machine=None, backend="torch"):
        self._native = _NativeModel(calibration=calibration, machine=machine, backend=backend)

    @property
    def cores(self):
        """Cores per node of the machine."""
        return self._native.cores

    @property
    def machine(self):
        return self._native.machine

    def predict(self, network, processes_per_node=1, threads_per_process=None, batch=32, nodes=1, smt=False,
                fabric="edr"):
        """One configuration: images/s with its band, iteration terms, scaling efficiency."""
        threads = threads_per_process or max(1, self.cores // processes_per_node)
        return json.loads(self._native.predict_json(network, processes_per_node, threads, batch, nodes, smt, fabric))

    def scale(self, network, processes_per_node=1, threads_per_process=None, batch=32, nodes="1..1024", smt=False,
              fabric="edr"):
        """Predictions over node counts ("1..1024", "1,2,4" or "16"), with speed-up and efficiency."""
        threads = threads_per_process or max(1, self.cores // processes_per_node)
        return json.loads(self._native.scale_json(network, processes_per_node, threads, batch, str(nodes), smt, fabric))

    def recommend(self, network, batches=(32,), nodes="1", consider_smt=True, fabric="edr"):
        """The fastest processes per node, threads, SMT and batch, with baselines and ranking."""
        return json.loads(self._native.recommend_json(network, list(batches), str(nodes), consider_smt, fabric))
