// python/dnntune_module.cpp — the native half of `import dnntune`: a Model made from a
// calibration file or a CPU spec machine, and a GpuModel made from a GPU machine (k80 ... h200 or
// a GPU profile JSON), whose predict / scale / recommend return the same JSON documents as
// `dnntune predict|scale|recommend --json` (as text: dnntune/__init__.py turns them into dicts
// and picks the class by machine_kind). Errors become ValueError with the command's one-line message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "common/json_file.hpp"
#include "data/builtin_machines.hpp"
#include "model/calibration.hpp"
#include "model/gpu_calibration.hpp"
#include "model/gpu_report.hpp"
#include "model/spec_model.hpp"
#include "model/predictor.hpp"
#include "model/report.hpp"
#include "model/scaling.hpp"
#include "tuner/gpu_recommendation.hpp"
#include "tuner/recommendation.hpp"
#include "tuner/report.hpp"
#include "workloads/zoo.hpp"

namespace py = pybind11;
using namespace dnntune;

namespace {

template <class T>
T value_or_raise(Expected<T> result) {
  if (!result) throw py::value_error(result.error().message);
  return std::move(*result);
}

model::TrainingConfiguration configuration_of(int processes_per_node, int threads_per_process, std::int64_t batch,
                                              int nodes, bool smt, const std::string& fabric) {
  model::TrainingConfiguration configuration;
  configuration.processes_per_node = processes_per_node;
  configuration.threads_per_process = threads_per_process;
  configuration.batch_per_process = batch;
  configuration.nodes = nodes;
  configuration.smt = smt;
  configuration.fabric = fabric;
  return configuration;
}

class Model {
 public:
  // A calibration file (this machine's, from `dnntune fit`), or a spec machine (a built-in name
  // or a profile JSON) with a reference calibration's efficiencies (the built-in one by default).
  Model(const std::optional<std::string>& calibration_path, const std::optional<std::string>& machine,
        const std::string& backend)
      : predictor_(make(calibration_path, machine, backend)) {}

  std::string predict(const std::string& network, int processes_per_node, int threads_per_process, std::int64_t batch,
                      int nodes, bool smt, const std::string& fabric) const {
    const auto prediction = value_or_raise(predictor_.predict(
        value_or_raise(workloads::load_network(network)),
        configuration_of(processes_per_node, threads_per_process, batch, nodes, smt, fabric)));
    auto document = schema_head("dnntune.prediction", 1);
    document.update(model::prediction_json(prediction));
    return document.dump();
  }

  std::string scale(const std::string& network, int processes_per_node, int threads_per_process, std::int64_t batch,
                    const std::string& nodes, bool smt, const std::string& fabric) const {
    const auto rows = value_or_raise(model::predict_scaling(
        predictor_, value_or_raise(workloads::load_network(network)),
        configuration_of(processes_per_node, threads_per_process, batch, 1, smt, fabric),
        value_or_raise(model::parse_node_counts(nodes))));
    auto document = schema_head("dnntune.scaling", 1);
    document["rows"] = model::scaling_json(rows);
    return document.dump();
  }

  std::string recommend(const std::string& network, const std::vector<std::int64_t>& batches,
                        const std::string& nodes, bool consider_smt, const std::string& fabric) const {
    tuner::SearchSpaceOptions space;
    space.batches_per_process = batches;
    space.node_counts = value_or_raise(model::parse_node_counts(nodes));
    space.consider_smt = consider_smt;
    space.fabric = fabric;
    const auto recommendation = value_or_raise(
        tuner::recommend(predictor_, value_or_raise(workloads::load_network(network)), space, {}));
    return tuner::recommendation_json(recommendation, false).dump();
  }

  int cores() const { return predictor_.rates().cores(); }
  std::string machine() const { return predictor_.machine().name; }

 private:
  static model::Predictor make(const std::optional<std::string>& calibration_path,
                               const std::optional<std::string>& machine, const std::string& backend) {
    if (!calibration_path && !machine)
      throw py::value_error("give calibration= (a `dnntune fit` file) or machine= (`dnntune machines`)");
    if (!machine) return value_or_raise(model::Predictor::from_calibration(value_or_raise(model::read_calibration(*calibration_path))));
    const auto profile = value_or_raise(data::load_machine(*machine));
    // As the command: the closest reference (the given one, else the built-in ones) with spec priors.
    std::vector<model::ReferenceCandidate> candidates;
    if (calibration_path) {
      candidates.push_back({*calibration_path, value_or_raise(model::read_calibration(*calibration_path))});
    } else {
      for (const auto& text : data::builtin_reference_calibration_texts())
        if (!data::is_gpu_reference_calibration(text))  // the GPU model's: GpuModel
          candidates.push_back({std::string("built-in reference \"") + text.name + "\"",
                              value_or_raise(model::calibration_from_json_text(text.json, text.name))});
    }
    return std::move(value_or_raise(model::make_spec_model(profile, candidates, backend)).predictor);
  }

  model::Predictor predictor_;
};

// The GPU model of `dnntune predict|scale|recommend --machine GPU`: one process per GPU, with the
// efficiencies of a `dnntune fit --backend torch-cuda` file or the built-in reference.
class GpuModel {
 public:
  GpuModel(const std::string& machine, const std::optional<std::string>& calibration_path)
      : node_(value_or_raise(model::gpu_node(value_or_raise(data::load_machine(machine))))),
        efficiencies_(calibration_path
                          ? value_or_raise(model::read_gpu_calibration(*calibration_path)).efficiencies
                          : value_or_raise(model::reference_gpu_efficiencies(
                                data::builtin_reference_calibration("torch-cuda")))) {}

  std::string predict(const std::string& network, int gpus, std::int64_t batch, int nodes, double fusion_megabytes,
                      const std::string& fabric, const std::string& precision, const std::string& memory_format) const {
    const auto prediction = value_or_raise(model::predict_gpu(
        value_or_raise(workloads::load_network(network)), node_, efficiencies_,
        configuration_of(gpus, batch, nodes, fusion_megabytes, fabric, precision, memory_format)));
    auto document = schema_head("dnntune.gpu-prediction", 1);
    document.update(model::gpu_prediction_json(prediction));
    return document.dump();
  }

  std::string scale(const std::string& network, int gpus, std::int64_t batch, const std::string& nodes,
                    double fusion_megabytes, const std::string& fabric, const std::string& precision,
                    const std::string& memory_format) const {
    const auto rows = value_or_raise(model::predict_gpu_scaling(
        value_or_raise(workloads::load_network(network)), node_, efficiencies_,
        configuration_of(gpus, batch, 1, fusion_megabytes, fabric, precision, memory_format),
        value_or_raise(model::parse_node_counts(nodes))));
    auto document = schema_head("dnntune.gpu-scaling", 1);
    document["rows"] = model::gpu_scaling_json(rows);
    return document.dump();
  }

  std::string recommend(const std::string& network, const std::vector<int>& gpus,
                        const std::vector<std::int64_t>& batches, const std::vector<double>& fusion_megabytes,
                        const std::string& nodes, const std::string& fabric,
                        const std::vector<std::string>& precisions, const std::vector<std::string>& memory_formats) const {
    tuner::GpuSearchOptions search;
    for (const std::string& precision : precisions) {
      search.precisions.push_back(value_or_raise(model::parse_gpu_precision(precision)));
      value_or_raise(model::check_gpu_precision(node_, search.precisions.back()));
    }
    for (const std::string& memory_format : memory_formats)
      search.memory_formats.push_back(value_or_raise(model::parse_gpu_memory_format(memory_format)));
    search.gpus_per_node = gpus;
    if (!batches.empty()) search.batches_per_gpu = batches;
    if (!fusion_megabytes.empty()) search.fusion_megabytes = fusion_megabytes;
    search.node_counts = value_or_raise(model::parse_node_counts(nodes));
    search.fabric = fabric;
    return tuner::gpu_recommendation_json(
               value_or_raise(tuner::recommend_gpu(value_or_raise(workloads::load_network(network)), node_,
                                                   efficiencies_, search)),
               false)
        .dump();
  }

  int gpus_per_node() const { return node_.gpus_per_node; }
  std::string machine() const { return node_.name; }

 private:
  static model::GpuConfiguration configuration_of(int gpus, std::int64_t batch, int nodes, double fusion_megabytes,
                                                  const std::string& fabric, const std::string& precision,
                                                  const std::string& memory_format) {
    model::GpuConfiguration configuration;
    // "" : the GPU's PyTorch default precision, contiguous.
    if (!precision.empty()) configuration.precision = value_or_raise(model::parse_gpu_precision(precision));
    if (!memory_format.empty())
      configuration.memory_format = value_or_raise(model::parse_gpu_memory_format(memory_format));
    configuration.gpus_per_node = gpus;
    configuration.batch_per_gpu = batch;
    configuration.nodes = nodes;
    configuration.fusion_bytes = fusion_megabytes * 1024 * 1024;
    configuration.fabric = fabric;
    return configuration;
  }

  model::GpuNode node_;
  model::GpuEfficiencies efficiencies_;
};

// "gpu" or "cpu" for a machine name or profile file, so `dnntune.Model` builds the right model.
std::string machine_kind(const std::string& machine) {
  return value_or_raise(data::load_machine(machine)).kind == records::MachineKind::gpu ? "gpu" : "cpu";
}

}  // namespace

PYBIND11_MODULE(_dnntune, module) {
  module.doc() = "dnntune's model and tuner (see the dnntune package for the documented API)";
  py::class_<Model>(module, "Model")
      .def(py::init<const std::optional<std::string>&, const std::optional<std::string>&, const std::string&>(),
           py::arg("calibration") = py::none(), py::arg("machine") = py::none(), py::arg("backend") = "torch")
      .def("predict_json", &Model::predict, py::arg("network"), py::arg("processes_per_node"),
           py::arg("threads_per_process"), py::arg("batch"), py::arg("nodes"), py::arg("smt"), py::arg("fabric"))
      .def("scale_json", &Model::scale, py::arg("network"), py::arg("processes_per_node"),
           py::arg("threads_per_process"), py::arg("batch"), py::arg("nodes"), py::arg("smt"), py::arg("fabric"))
      .def("recommend_json", &Model::recommend, py::arg("network"), py::arg("batches"), py::arg("nodes"),
           py::arg("consider_smt"), py::arg("fabric"))
      .def_property_readonly("cores", &Model::cores)
      .def_property_readonly("machine", &Model::machine);
  py::class_<GpuModel>(module, "GpuModel")
      .def(py::init<const std::string&, const std::optional<std::string>&>(), py::arg("machine"),
           py::arg("calibration") = py::none())
      .def("predict_json", &GpuModel::predict, py::arg("network"), py::arg("gpus"), py::arg("batch"), py::arg("nodes"),
           py::arg("fusion_megabytes"), py::arg("fabric"), py::arg("precision") = "",
           py::arg("memory_format") = "")
      .def("scale_json", &GpuModel::scale, py::arg("network"), py::arg("gpus"), py::arg("batch"), py::arg("nodes"),
           py::arg("fusion_megabytes"), py::arg("fabric"), py::arg("precision") = "", py::arg("memory_format") = "")
      .def("recommend_json", &GpuModel::recommend, py::arg("network"), py::arg("gpus"), py::arg("batches"),
           py::arg("fusion_megabytes"), py::arg("nodes"), py::arg("fabric"),
           py::arg("precisions") = std::vector<std::string>{}, py::arg("memory_formats") = std::vector<std::string>{})
      .def_property_readonly("gpus_per_node", &GpuModel::gpus_per_node)
      .def_property_readonly("machine", &GpuModel::machine);
  module.def("machine_kind", &machine_kind, py::arg("machine"));
}
