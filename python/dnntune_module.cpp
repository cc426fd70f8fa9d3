// python/dnntune_module.cpp — the native half of `import dnntune`: a Model made from a
// calibration file, a CPU spec machine or this machine's cached calibration (the command's
// sources and defaults, frontend/), and a GpuModel made from a GPU machine (a built-in GPU
// profile or a GPU profile JSON), whose predict / scale / recommend return the same JSON documents as
// `dnntune predict|scale|recommend --json` (as text: dnntune/__init__.py turns them into dicts
// and picks the class by machine_kind). Errors become ValueError with the command's one-line message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/json_file.hpp"
#include "common/number_grammar.hpp"
#include "data/builtin_machines.hpp"
#include "frontend/model_source.hpp"
#include "frontend/request_defaults.hpp"
#include "model/gpu_calibration.hpp"
#include "model/gpu_report.hpp"
#include "model/machine_rates.hpp"
#include "model/predictor.hpp"
#include "model/report.hpp"
#include "model/scaling.hpp"
#include "pipeline/default_calibration.hpp"
#include "probe/topology.hpp"
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

// An argument within the command's range for the same option (common/number_grammar.hpp): 0
// processes or GPUs is refused, as the command refuses it, never read as "the default".
template <class T>
T checked(T value, const NumberRule& rule, const char* name) {
  if (auto in_range = check_number(static_cast<double>(value), rule); !in_range)
    throw py::value_error(std::string(name) + ": " + in_range.error().message);
  return value;
}
template <class T>
const std::vector<T>& checked(const std::vector<T>& values, const ListRule& rule, const char* name) {
  if (auto length = check_list_length(values.size(), rule, name); !length) throw py::value_error(length.error().message);
  for (const T& value : values) checked(value, rule.value, name);
  return values;
}

// A layout value left out (None) is 0 here: with_default_layout (frontend/request_defaults.hpp)
// fills it with the recommended layout's, as the command does; one given is checked like the
// command's option, so 0 is refused, never read as "not given".
model::TrainingConfiguration configuration_of(std::optional<int> processes_per_node, std::optional<int> threads_per_process,
                                              std::int64_t batch, int nodes, bool smt, const std::string& fabric) {
  model::TrainingConfiguration configuration;
  configuration.processes_per_node =
      processes_per_node ? checked(*processes_per_node, rules::ranks_or_threads, "processes_per_node") : 0;
  configuration.threads_per_process =
      threads_per_process ? checked(*threads_per_process, rules::ranks_or_threads, "threads_per_process") : 0;
  configuration.batch_per_process = checked(batch, rules::batch_per_process, "batch");
  configuration.nodes = checked(nodes, rules::nodes, "nodes");
  configuration.smt = smt;
  configuration.fabric = fabric;
  return configuration;
}

// Progress of a first run's calibration on standard error, as the command shows it.
void print_progress(const std::string& line) { std::cerr << "dnntune: " << line << std::endl; }

class Model {
 public:
  // The command's sources, through the same front end (frontend/model_source.hpp): a calibration
  // file, a spec machine (a built-in name or a profile JSON) with the closest reference's
  // efficiencies (or the given calibration's), or neither: this machine, from its cached
  // calibration for each request (made on first use by `executable`, the dnntune command).
  Model(const std::optional<std::string>& calibration_path, const std::optional<std::string>& machine,
        const std::string& backend, const std::optional<std::string>& executable) {
    if (machine) check(frontend::check_machine_name(*machine, "machine="));
    if (calibration_path) source_.calibration_path = *calibration_path;
    if (machine) source_.machine = *machine;
    source_.backend = backend;
    if (executable) executable_ = *executable;
    // A file or a spec machine answers every request alike: loaded once, and refused here.
    if (calibration_path || machine) predictor_ = load({}, {});
  }

  std::string predict(const std::string& network_name, std::optional<int> processes_per_node,
                      std::optional<int> threads_per_process,
                      std::int64_t batch, int nodes, bool smt, const std::string& fabric) const {
    const auto network = value_or_raise(workloads::load_network(network_name));
    const auto asked = configuration_of(processes_per_node, threads_per_process, batch, nodes, smt, fabric);
    const model::Predictor predictor = predictor_for(network_name, {batch});
    const auto defaulted = value_or_raise(frontend::with_default_layout(predictor, network, asked,
                                                                       given_layout(processes_per_node, threads_per_process, smt)));
    const auto prediction = value_or_raise(predictor.predict(network, defaulted.configuration));
    auto document = schema_head("dnntune.prediction", 1);
    document.update(model::prediction_json(prediction));
    if (!defaulted.layout_basis.empty()) document["layout_basis"] = defaulted.layout_basis;
    return document.dump();
  }

  std::string scale(const std::string& network_name, std::optional<int> processes_per_node,
                    std::optional<int> threads_per_process,
                    std::int64_t batch, const std::string& nodes, bool smt, const std::string& fabric) const {
    const auto network = value_or_raise(workloads::load_network(network_name));
    const auto asked = configuration_of(processes_per_node, threads_per_process, batch, 1, smt, fabric);
    const auto node_counts = value_or_raise(model::parse_node_counts(nodes, "nodes"));
    const model::Predictor predictor = predictor_for(network_name, {batch});
    const auto defaulted = value_or_raise(frontend::with_default_layout(predictor, network, asked,
                                                                       given_layout(processes_per_node, threads_per_process, smt)));
    const auto rows = value_or_raise(model::predict_scaling(predictor, network, defaulted.configuration, node_counts));
    auto document = schema_head("dnntune.scaling", 1);
    document["rows"] = model::scaling_json(rows);
    if (!defaulted.layout_basis.empty()) document["layout_basis"] = defaulted.layout_basis;
    return document.dump();
  }

  std::string recommend(const std::string& network_name, const std::vector<std::int64_t>& batches,
                        const std::string& nodes, bool consider_smt, const std::string& fabric) const {
    tuner::SearchSpaceOptions space;
    space.batches_per_process = checked(batches, lists::batches, "batches");
    space.node_counts = value_or_raise(model::parse_node_counts(nodes, "nodes"));
    space.consider_smt = consider_smt;
    space.fabric = fabric;
    const auto network = value_or_raise(workloads::load_network(network_name));
    // As the command: this machine's calibration measures the batches its ranks would run with.
    const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const model::Predictor predictor = predictor_for(network_name, tuner::batches_to_score(space, cpus));
    if (auto bounded = frontend::announce_search(predictor, network, space, print_progress,
                                                 frontend::default_max_search_minutes, "");
        !bounded)
      throw py::value_error(bounded.error().message);
    const auto recommendation = value_or_raise(tuner::recommend(predictor, network, space, {}));
    return tuner::recommendation_json(recommendation, false).dump();
  }

  int cores() const {
    if (predictor_) return predictor_->rates().cores();
    return value_or_raise(model::machine_rates(machine_profile())).cores();
  }
  std::string machine() const { return machine_profile().name; }

 private:
  static void check(const Expected<void>& result) {
    if (!result) throw py::value_error(result.error().message);
  }
  static frontend::GivenLayout given_layout(std::optional<int> processes_per_node, std::optional<int> threads_per_process,
                                           bool smt) {
    return {processes_per_node.has_value(), threads_per_process.has_value(), smt};
  }
  model::Predictor load(const std::vector<std::string>& models, const std::vector<std::int64_t>& batches) const {
    pipeline::DefaultCalibrationRequest request;
    request.models = models;
    request.batches = batches;
    request.backend = source_.backend;
    request.executable = executable_;
    return value_or_raise(frontend::load_predictor(source_, request, print_progress));
  }
  // The model for a request: the loaded one, or this machine's calibration covering it.
  model::Predictor predictor_for(const std::string& network, const std::vector<std::int64_t>& batches) const {
    if (predictor_) return *predictor_;
    return load({network}, batches);
  }
  // The node a Model describes: its model's, or this machine's probed one.
  records::MachineProfile machine_profile() const {
    if (predictor_) return predictor_->machine();
    return value_or_raise(probe::describe_this_machine());
  }

  frontend::ModelSource source_;
  std::string executable_;  // "": the workers of a first run are `dnntune` on the PATH
  std::optional<model::Predictor> predictor_;
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
        value_or_raise(model::parse_node_counts(nodes, "nodes"))));
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
      if (auto has = model::check_gpu_precision(node_, search.precisions.back()); !has)
        throw py::value_error(has.error().message);
    }
    for (const std::string& memory_format : memory_formats)
      search.memory_formats.push_back(value_or_raise(model::parse_gpu_memory_format(memory_format)));
    if (!gpus.empty()) search.gpus_per_node = checked(gpus, lists::gpus_per_node, "gpus");
    if (!batches.empty()) search.batches_per_gpu = checked(batches, lists::batches, "batches");
    if (!fusion_megabytes.empty()) search.fusion_megabytes = checked(fusion_megabytes, lists::fusion_megabytes, "fusion_mb");
    search.node_counts = value_or_raise(model::parse_node_counts(nodes, "nodes"));
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
    configuration.gpus_per_node = checked(gpus, rules::ranks_or_threads, "gpus");
    configuration.batch_per_gpu = checked(batch, rules::batch_per_process, "batch");
    configuration.nodes = checked(nodes, rules::nodes, "nodes");
    configuration.fusion_bytes = checked(fusion_megabytes, rules::megabytes, "fusion_mb") * 1024 * 1024;
    configuration.fabric = fabric;
    return configuration;
  }

  model::GpuNode node_;
  model::GpuEfficiencies efficiencies_;
};

// "gpu" or "cpu" for a machine name or profile file, so `dnntune.Model` builds the right model.
std::string machine_kind(const std::string& machine) {
  if (auto named = frontend::check_machine_name(machine, "machine="); !named) throw py::value_error(named.error().message);
  return value_or_raise(data::load_machine(machine)).kind == records::MachineKind::gpu ? "gpu" : "cpu";
}

}  // namespace

PYBIND11_MODULE(_dnntune, module) {
  module.doc() = "dnntune's model and tuner (see the dnntune package for the documented API)";
  py::class_<Model>(module, "Model")
      .def(py::init<const std::optional<std::string>&, const std::optional<std::string>&, const std::string&,
                    const std::optional<std::string>&>(),
           py::arg("calibration") = py::none(), py::arg("machine") = py::none(), py::arg("backend") = "torch",
           py::arg("executable") = py::none())
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
  // This machine's cache entry (the folder of its calibration), for tests that seed the cache.
  module.def("cache_entry", [](const std::string& backend) {
    return value_or_raise(pipeline::default_calibration_entry(backend));
  }, py::arg("backend") = "torch");
  // The defaults the command uses, so that the Python signatures say the same.
  module.attr("default_fabric") = model::default_fabric;
  module.attr("default_fusion_mb") = model::default_fusion_megabytes;
}
