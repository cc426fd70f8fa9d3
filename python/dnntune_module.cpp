// python/dnntune_module.cpp — the native half of `import dnntune`: a Model made from a
// calibration file, a CPU spec machine or this machine's cached calibration, and a GpuModel made
// from a GPU machine (a built-in GPU profile or a GPU profile JSON). Their predict / scale /
// recommend build the command's requests from the keyword arguments, through the command's number
// grammar and list limits (common/number_grammar.hpp), and return frontend's answers as the same
// JSON documents as `dnntune predict|scale|recommend --json` (as text: dnntune/__init__.py turns
// them into dicts and picks the class by machine_kind). Every bad argument, a bool where a number
// is meant and an empty list included, is a ValueError with the command's one-line message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "common/number_grammar.hpp"
#include "common/progress.hpp"
#include "data/builtin_machines.hpp"
#include "frontend/answers.hpp"
#include "frontend/gpu_answers.hpp"
#include "frontend/model_source.hpp"
#include "frontend/option_rows.hpp"
#include "model/machine_rates.hpp"
#include "pipeline/default_calibration.hpp"
#include "probe/topology.hpp"
#include "torch_module/torch_module.hpp"

namespace py = pybind11;
using namespace dnntune;

namespace {

template <class T>
T value_or_raise(Expected<T> result) {
  if (!result) throw py::value_error(result.error().message);
  return std::move(*result);
}
void check(const Expected<void>& result) {
  if (!result) throw py::value_error(result.error().message);
}

// A keyword's value as the command's grammar reads a number: an int as its digits, a float as
// Python writes it ("1.5", "1e-320", "nan"). A bool, a string or anything else is no number, as
// `--batch True` is none.
std::string number_text(py::handle value, const std::string& name, const NumberRule& rule) {
  const bool number =
      !py::isinstance<py::bool_>(value) && (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value));
  const std::string text = py::str(number ? value : py::repr(value));
  if (!number) throw py::value_error(name + ": Value " + text + " is not a number (" + describe(rule) + ")");
  return text;
}

double number(py::handle value, const std::string& name, const NumberRule& rule) {
  auto checked = parse_checked(number_text(value, name, rule), rule);
  if (!checked) throw py::value_error(name + ": " + checked.error().message);
  return *checked;
}

// A list keyword as the command's list text: a string is that text ("1..64"), a number one item,
// a list or tuple each of its numbers; an empty list is refused as the command refuses "".
std::string list_text(py::handle value, const std::string& name, const ListRule& rule) {
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value))
    return number_text(value, name, rule.value);
  std::string text;
  for (py::handle item : value) text += (text.empty() ? "" : ",") + number_text(item, name, rule.value);
  if (text.empty()) check(check_list_length(0, rule, name));
  return text;
}

template <class T>
std::vector<T> numbers(py::handle value, const std::string& name, const ListRule& rule) {
  const auto values = value_or_raise(parse_checked_list(list_text(value, name, rule), rule, name));
  return std::vector<T>(values.begin(), values.end());
}

std::vector<int> node_counts(py::handle value) {
  return value_or_raise(model::parse_node_counts(list_text(value, "nodes", lists::node_counts), "nodes"));
}

// A flag keyword: True or False (None: not given, False).
bool flag(py::handle value, const std::string& name) {
  if (value.is_none()) return false;
  if (!py::isinstance<py::bool_>(value))
    throw py::value_error(name + ": True or False, not " + std::string(py::str(py::repr(value))));
  return value.cast<bool>();
}

// A name keyword: a string (None: not given).
std::optional<std::string> name_of(py::handle value, const std::string& name) {
  if (value.is_none()) return std::nullopt;
  if (!py::isinstance<py::str>(value))
    throw py::value_error(name + ": a name, not " + std::string(py::str(py::repr(value))));
  return value.cast<std::string>();
}

// A list of names: one name or a list of them (None: not given); an empty list is refused.
std::vector<std::string> names_of(py::handle value, const std::string& name) {
  if (value.is_none()) return {};
  if (py::isinstance<py::str>(value)) return {value.cast<std::string>()};
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value))
    throw py::value_error(name + ": a name or a list of names, not " + std::string(py::str(py::repr(value))));
  std::vector<std::string> names;
  for (py::handle item : value) {
    if (!py::isinstance<py::str>(item))
      throw py::value_error(name + ": a name, not " + std::string(py::str(py::repr(item))));
    names.push_back(item.cast<std::string>());
  }
  if (names.empty()) check(check_list_length(0, ListRule{}, name));
  return names;
}

// A keyword that must be a name (the network; the fabric, None: the default).
std::string required_name(py::handle value, const std::string& name) {
  if (value.is_none()) throw py::value_error(name + ": a name, not None");
  return *name_of(value, name);
}
std::string fabric_of(py::handle value) { return name_of(value, "fabric").value_or(model::default_fabric); }

// allocator=: None for the one recommended; a name is checked when answered (frontend), "" is
// refused as the command refuses `--allocator ""`.
std::string allocator_of(py::handle value) {
  const auto name = name_of(value, "allocator");
  if (name && name->empty()) throw py::value_error("allocator: an allocator name, not ''");
  return name.value_or("");
}

// The CPU request's configuration: a layout value left out (None) is the recommended setup's
// (frontend::answer_predict); one given is checked like the command's option, so 0 is refused.
frontend::PredictRequest setup_request(py::handle network, py::handle processes_per_node,
                                       py::handle threads_per_process, py::handle batch, py::handle nodes,
                                       py::handle smt, py::handle fabric, py::handle allocator) {
  frontend::PredictRequest request;
  request.network = required_name(network, "network");
  model::TrainingConfiguration& configuration = request.configuration;
  if (!processes_per_node.is_none())
    configuration.processes_per_node =
        static_cast<int>(number(processes_per_node, "processes_per_node", rules::ranks_or_threads));
  if (!threads_per_process.is_none())
    configuration.threads_per_process =
        static_cast<int>(number(threads_per_process, "threads_per_process", rules::ranks_or_threads));
  configuration.batch_per_process = static_cast<std::int64_t>(number(batch, "batch", rules::batch_per_process));
  configuration.nodes = static_cast<int>(number(nodes, "nodes", rules::nodes));
  configuration.smt = flag(smt, "smt");
  configuration.fabric = fabric_of(fabric);
  request.given = {!processes_per_node.is_none(), !threads_per_process.is_none(), configuration.smt};
  request.allocator = allocator_of(allocator);
  return request;
}

class Model {
 public:
  // The command's sources, through the same front end (frontend/model_source.hpp): a calibration
  // file, a spec machine (a built-in name or a profile JSON) with the closest reference's
  // efficiencies (or the given calibration's), or neither: this machine, from its cached
  // calibration for each request (made on first use by `executable`, the dnntune command).
  Model(const std::optional<std::string>& calibration_path, const std::optional<std::string>& machine,
        const std::string& backend, const std::optional<std::string>& executable)
      : source_(source_of(calibration_path, machine, backend), executable.value_or(""), print_progress) {
    // A file or a spec machine answers every request alike: loaded once, and refused here.
    check(source_.preload());
  }

  std::string predict(py::handle network, py::handle processes_per_node, py::handle threads_per_process,
                      py::handle batch, py::handle nodes, py::handle smt, py::handle fabric,
                      py::handle allocator) const {
    const auto request =
        setup_request(network, processes_per_node, threads_per_process, batch, nodes, smt, fabric, allocator);
    return frontend::prediction_document(value_or_raise(frontend::answer_predict(source_, request))).dump();
  }

  std::string scale(py::handle network, py::handle processes_per_node, py::handle threads_per_process, py::handle batch,
                    py::handle nodes, py::handle smt, py::handle fabric, py::handle allocator) const {
    frontend::ScaleRequest request{
        setup_request(network, processes_per_node, threads_per_process, batch, py::int_(1), smt, fabric, allocator),
        node_counts(nodes)};
    return frontend::scaling_document(value_or_raise(frontend::answer_scale(source_, request))).dump();
  }

  std::string recommend(py::handle network, py::handle batches, py::handle nodes, py::handle consider_smt,
                        py::handle fabric, py::handle allocator, py::handle max_minutes) const {
    frontend::RecommendRequest request;
    request.network = required_name(network, "network");
    if (!batches.is_none())
      request.space.batches_per_process = numbers<std::int64_t>(batches, "batches", lists::batches);
    if (!nodes.is_none()) request.space.node_counts = node_counts(nodes);
    request.space.consider_smt = consider_smt.is_none() || flag(consider_smt, "consider_smt");
    request.space.fabric = fabric_of(fabric);
    request.allocator = allocator_of(allocator);
    if (!max_minutes.is_none()) request.max_minutes = number(max_minutes, "max_minutes", rules::search_minutes);
    request.max_minutes_option = "max_minutes";  // the keyword that raises the limit
    return frontend::recommendation_document(value_or_raise(frontend::answer_recommend(source_, request)), false)
        .dump();
  }

  int cores() const {
    if (answers_alike()) return value_or_raise(source_.model_for("", {})).predictor.rates().cores();
    return value_or_raise(model::machine_rates(value_or_raise(probe::describe_this_machine()))).cores();
  }
  std::string machine() const {
    if (answers_alike()) return value_or_raise(source_.model_for("", {})).predictor.machine().name;
    return value_or_raise(probe::describe_this_machine()).name;
  }

 private:
  static frontend::ModelSource source_of(const std::optional<std::string>& calibration_path,
                                         const std::optional<std::string>& machine, const std::string& backend) {
    if (machine) check(frontend::check_machine_name(*machine, "machine="));
    frontend::ModelSource source;
    source.calibration_path = calibration_path.value_or("");
    source.machine = machine.value_or("");
    source.backend = backend;
    return source;
  }
  bool answers_alike() const { return !source_.source().calibration_path.empty() || !source_.source().machine.empty(); }

  frontend::AnswerSource source_;
};

// The GPU model of `dnntune predict|scale|recommend --machine GPU`: one process per GPU, with the
// efficiencies of a `dnntune fit --backend torch-cuda` file or the built-in reference.
class GpuModel {
 public:
  GpuModel(const std::string& machine, const std::optional<std::string>& calibration_path)
      : gpu_(gpu_source(machine, calibration_path)) {}

  std::string predict(py::handle network, py::handle gpus, py::handle batch, py::handle nodes,
                      py::handle fusion_megabytes, py::handle fabric, py::handle precision,
                      py::handle memory_format) const {
    const auto request = setup_request(network, gpus, batch, nodes, fusion_megabytes, fabric, precision, memory_format);
    return frontend::gpu_prediction_document(value_or_raise(frontend::answer_gpu_predict(gpu_, request))).dump();
  }

  std::string scale(py::handle network, py::handle gpus, py::handle batch, py::handle nodes,
                    py::handle fusion_megabytes, py::handle fabric, py::handle precision,
                    py::handle memory_format) const {
    const auto request =
        setup_request(network, gpus, batch, py::int_(1), fusion_megabytes, fabric, precision, memory_format);
    return frontend::gpu_scaling_document(value_or_raise(frontend::answer_gpu_scale(gpu_, request, node_counts(nodes))))
        .dump();
  }

  std::string recommend(py::handle network, py::handle gpus, py::handle batches, py::handle fusion_megabytes,
                        py::handle nodes, py::handle fabric, py::handle precisions, py::handle memory_formats) const {
    frontend::GpuRecommendRequest request;
    request.network = required_name(network, "network");
    tuner::GpuSearchOptions& search = request.search;
    if (!gpus.is_none()) search.gpus_per_node = numbers<int>(gpus, "gpus", lists::gpus_per_node);
    if (!batches.is_none()) search.batches_per_gpu = numbers<std::int64_t>(batches, "batches", lists::batches);
    if (!fusion_megabytes.is_none())
      search.fusion_megabytes = numbers<double>(fusion_megabytes, "fusion_mb", lists::fusion_megabytes);
    if (!nodes.is_none()) search.node_counts = node_counts(nodes);
    search.fabric = fabric_of(fabric);
    request.precisions = names_of(precisions, "precision");
    request.memory_formats = names_of(memory_formats, "memory_format");
    return frontend::gpu_recommendation_document(value_or_raise(frontend::answer_gpu_recommend(gpu_, request)), false)
        .dump();
  }

  int gpus_per_node() const { return gpu_.node.gpus_per_node; }
  std::string machine() const { return gpu_.node.name; }

 private:
  static frontend::GpuSource gpu_source(const std::string& machine,
                                        const std::optional<std::string>& calibration_path) {
    frontend::ModelSource source;
    source.machine = machine;
    source.calibration_path = calibration_path.value_or("");
    auto gpu = value_or_raise(frontend::gpu_source(source));
    if (!gpu) throw py::value_error(machine + " is not a GPU machine");
    return std::move(*gpu);
  }
  // One GPU configuration: gpus (None: 1), batch, nodes and fusion_mb checked as the command's
  // options; precision and memory_format None for the defaults, "" refused.
  static frontend::GpuSetupRequest setup_request(py::handle network, py::handle gpus, py::handle batch,
                                                 py::handle nodes, py::handle fusion_megabytes, py::handle fabric,
                                                 py::handle precision, py::handle memory_format) {
    frontend::GpuSetupRequest request;
    request.network = required_name(network, "network");
    model::GpuConfiguration& configuration = request.configuration;
    if (!gpus.is_none()) configuration.gpus_per_node = static_cast<int>(number(gpus, "gpus", rules::ranks_or_threads));
    configuration.batch_per_gpu = static_cast<std::int64_t>(number(batch, "batch", rules::batch_per_process));
    configuration.nodes = static_cast<int>(number(nodes, "nodes", rules::nodes));
    if (!fusion_megabytes.is_none())
      configuration.fusion_bytes = number(fusion_megabytes, "fusion_mb", rules::megabytes) * 1024 * 1024;
    configuration.fabric = fabric_of(fabric);
    request.precision = name_of(precision, "precision");
    request.memory_format = name_of(memory_format, "memory_format");
    return request;
  }

  frontend::GpuSource gpu_;
};

// "gpu" or "cpu" for a machine name or profile file, so `dnntune.Model` builds the right model.
std::string machine_kind(const std::string& machine) {
  if (auto named = frontend::check_machine_name(machine, "machine="); !named)
    throw py::value_error(named.error().message);
  return value_or_raise(data::load_machine(machine)).kind == records::MachineKind::gpu ? "gpu" : "cpu";
}

}  // namespace

PYBIND11_MODULE(_dnntune, module) {
  module.doc() = "dnntune's model and tuner (see the dnntune package for the documented API)";
  // Every keyword is passed as given (None: not given) and checked by the command's rules here.
  const auto none = py::none();
  py::class_<Model>(module, "Model")
      .def(py::init<const std::optional<std::string>&, const std::optional<std::string>&, const std::string&,
                    const std::optional<std::string>&>(),
           py::arg("calibration") = none, py::arg("machine") = none, py::arg("backend") = "torch",
           py::arg("executable") = none)
      .def("predict_json", &Model::predict, py::arg("network"), py::arg("processes_per_node") = none,
           py::arg("threads_per_process") = none, py::arg("batch") = none, py::arg("nodes") = none,
           py::arg("smt") = none, py::arg("fabric") = none, py::arg("allocator") = none)
      .def("scale_json", &Model::scale, py::arg("network"), py::arg("processes_per_node") = none,
           py::arg("threads_per_process") = none, py::arg("batch") = none, py::arg("nodes") = none,
           py::arg("smt") = none, py::arg("fabric") = none, py::arg("allocator") = none)
      .def("recommend_json", &Model::recommend, py::arg("network"), py::arg("batches") = none, py::arg("nodes") = none,
           py::arg("consider_smt") = none, py::arg("fabric") = none, py::arg("allocator") = none,
           py::arg("max_minutes") = none)
      .def_property_readonly("cores", &Model::cores)
      .def_property_readonly("machine", &Model::machine);
  py::class_<GpuModel>(module, "GpuModel")
      .def(py::init<const std::string&, const std::optional<std::string>&>(), py::arg("machine"),
           py::arg("calibration") = none)
      .def("predict_json", &GpuModel::predict, py::arg("network"), py::arg("gpus") = none, py::arg("batch") = none,
           py::arg("nodes") = none, py::arg("fusion_megabytes") = none, py::arg("fabric") = none,
           py::arg("precision") = none, py::arg("memory_format") = none)
      .def("scale_json", &GpuModel::scale, py::arg("network"), py::arg("gpus") = none, py::arg("batch") = none,
           py::arg("nodes") = none, py::arg("fusion_megabytes") = none, py::arg("fabric") = none,
           py::arg("precision") = none, py::arg("memory_format") = none)
      .def("recommend_json", &GpuModel::recommend, py::arg("network"), py::arg("gpus") = none,
           py::arg("batches") = none, py::arg("fusion_megabytes") = none, py::arg("nodes") = none,
           py::arg("fabric") = none, py::arg("precisions") = none, py::arg("memory_formats") = none)
      .def_property_readonly("gpus_per_node", &GpuModel::gpus_per_node)
      .def_property_readonly("machine", &GpuModel::machine);
  module.def("machine_kind", &machine_kind, py::arg("machine"));
  // This machine's cache entry (the folder of its calibration), for tests that seed the cache.
  module.def(
      "cache_entry",
      [](const std::string& backend) { return value_or_raise(pipeline::default_calibration_entry(backend)); },
      py::arg("backend") = "torch");
  // The libtorch module's file, loaded as train() and the torch backend load it: the installed
  // package's test checks it is the one installed beside the package (tests/install/).
  module.def("torch_module_path", [] { return value_or_raise(torch_module::module_path()); });
  // The defaults the command uses, so that the Python signatures say the same.
  module.attr("default_fabric") = model::default_fabric;
  module.attr("default_fusion_mb") = model::default_fusion_megabytes;
  module.attr("default_batch") = model::TrainingConfiguration{}.batch_per_process;
  module.attr("default_scale_nodes") = frontend::default_scale_nodes;
  module.attr("default_max_minutes") = frontend::default_max_search_minutes;
  // The command's arguments that print this machine's fingerprint (dnntune.observe runs them),
  // with the option names from their rows.
  module.attr("fingerprint_arguments") = std::vector<std::string>{
      "probe", frontend::long_name(frontend::option_rows::quick), frontend::long_name(frontend::option_rows::json)};
}
