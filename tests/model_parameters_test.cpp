// tests/model_parameters_test.cpp — the parameter table (model/parameters.hpp) and what derives
// from it: every member of ModelParameters has exactly one row, the flat order, the priors, the
// identifiability rules, and calibration files that lack a parameter added after they were
// written (it loads at its prior) or list their parameters in another order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <set>

#include <nlohmann/json.hpp>

#include "data/builtin_machines.hpp"
#include "model/calibration.hpp"
#include "model/fit.hpp"
#include "model/parameters.hpp"
#include "model/report.hpp"

using namespace dnntune::model;
using nlohmann::json;

namespace {

json reference_calibration() { return json::parse(dnntune::data::builtin_reference_calibration("torch")); }

Calibration load(const json& document) {
  auto calibration = calibration_from_json_text(document.dump(), "test.json");
  INFO((calibration ? "" : calibration.error().message));
  REQUIRE(calibration);
  return *calibration;
}

// `document` without the parameter `name` anywhere: as a file written before it existed.
json without_parameter(json document, const std::string& name) {
  document["parameters"].erase(name);
  auto& estimates = document["fit"]["parameters"];
  const auto at =
      std::find_if(estimates.begin(), estimates.end(), [&](const json& item) { return item["name"] == name; });
  REQUIRE(at != estimates.end());
  const auto column = at - estimates.begin();
  estimates.erase(at);
  for (auto& replicate : document["bootstrap_parameters"]) replicate.erase(replicate.begin() + column);
  return document;
}

FitSample sample(LayerClass layer_class, int pass, int threads, bool smt, int co_running) {
  FitSample made;
  made.work = {layer_class, pass, 1e9, 1e6};
  made.setting = {threads, smt, co_running, 1};
  made.measured_seconds = 0.01;
  return made;
}

}  // namespace

TEST_CASE("every member of ModelParameters has exactly one row in the parameter table") {
  ModelParameters parameters;
  const auto* begin = reinterpret_cast<const unsigned char*>(&parameters);
  std::set<const double*> members;
  for (const ParameterDescriptor& descriptor : parameter_table()) {
    const double* member = &descriptor.value_in(parameters);
    const auto* byte = reinterpret_cast<const unsigned char*>(member);
    CHECK(byte >= begin);
    CHECK(byte + sizeof(double) <= begin + sizeof(ModelParameters));
    CHECK(members.insert(member).second);  // no two rows share a member
  }
  // All members are doubles: as many distinct rows as doubles fit in the struct covers them all.
  CHECK(members.size() * sizeof(double) == sizeof(ModelParameters));
}

TEST_CASE("the flat order runs class by class, then the globals, and names are unique") {
  const auto& table = parameter_table();
  // The order of the existing rows (the fit's coordinate order, so its last digits, follows it).
  const std::vector<std::string> conv_spatial = {"conv_spatial.efficiency.forward",
                                                 "conv_spatial.efficiency.backward_data",
                                                 "conv_spatial.efficiency.backward_weights",
                                                 "conv_spatial.overhead_seconds.forward",
                                                 "conv_spatial.overhead_seconds.backward_data",
                                                 "conv_spatial.overhead_seconds.backward_weights",
                                                 "conv_spatial.contention",
                                                 "conv_spatial.coherency",
                                                 "conv_spatial.smt_gain",
                                                 "conv_spatial.corun_slowdown"};
  int previous = -1;
  for (const std::string& name : conv_spatial) {
    INFO(name);
    CHECK(parameter_index(name) > previous);
    previous = parameter_index(name);
  }
  CHECK(parameter_index("conv_pointwise.efficiency.forward") > previous);

  std::set<std::string> names;
  int last_class = 0;
  for (std::size_t index = 0; index < table.size(); ++index) {
    const ParameterDescriptor& descriptor = table[index];
    INFO(descriptor.name);
    CHECK(names.insert(descriptor.name).second);
    CHECK(parameter_index(descriptor.name) == static_cast<int>(index));
    const int layer_class = static_cast<int>(descriptor.layer_class);
    CHECK(layer_class >= last_class);  // classes in order, the globals (count_) last
    last_class = layer_class;
    if (descriptor.layer_class != LayerClass::count_)
      CHECK(descriptor.name.rfind(class_name(descriptor.layer_class) + ".", 0) == 0);
    if (descriptor.pass >= 0) {
      const std::string pass = "." + dnntune::workloads::pass_name(dnntune::workloads::all_passes[descriptor.pass]);
      CHECK(descriptor.name.compare(descriptor.name.size() - pass.size(), pass.size(), pass) == 0);
    }
  }
  CHECK(parameter_index("bandwidth_efficiency") >= 0);
  CHECK(parameter_index("smooth_max_exponent") >= 0);
  CHECK(parameter_index("conv_spatial.no_such_term") == -1);
}

TEST_CASE("a default ModelParameters holds every prior, inside its bounds, and flatten and unflatten invert") {
  const ModelParameters priors;
  for (const ParameterDescriptor& descriptor : parameter_table()) {
    INFO(descriptor.name);
    CHECK(descriptor.value_in(priors) == descriptor.prior);
    CHECK(descriptor.prior >= descriptor.lower);
    CHECK(descriptor.prior <= descriptor.upper);
    CHECK(descriptor.lower < descriptor.upper);
    if (descriptor.log_scale) CHECK(descriptor.lower > 0);
  }
  CHECK(priors.of(LayerClass::conv_native).efficiency[1] == 0.03);  // libtorch's own kernel
  CHECK(priors.of(LayerClass::conv_spatial).efficiency[1] == 0.3);
  CHECK(priors.smooth_max_exponent == 3.0);

  std::vector<double> values;
  for (std::size_t index = 0; index < parameter_table().size(); ++index) values.push_back(0.001 * (index + 1));
  const ModelParameters made = unflatten(values);
  CHECK(made.of(LayerClass::conv_spatial).efficiency[0] == 0.001);
  CHECK(made.of(LayerClass::conv_spatial).corun_slowdown == Approx(0.010));
  CHECK(made.smooth_max_exponent == Approx(values[parameter_index("smooth_max_exponent")]));
  CHECK(made.work_item_channels == Approx(0.001 * values.size()));  // the last row
  CHECK(flatten(made) == values);
}

TEST_CASE("each parameter is free exactly when the measurements show what its rule asks for") {
  const auto free_names = [](const std::vector<FitSample>& samples) {
    const auto free = identifiable_parameters(samples);
    std::set<std::string> names;
    for (std::size_t index = 0; index < free.size(); ++index)
      if (free[index]) names.insert(parameter_table()[index].name);
    return names;
  };
  CHECK(free_names({}).empty());

  // Convolutions forward on 1 and 2 cores; batch norm backward on 1, 2 and 4 cores, with SMT
  // and with co-running processes.
  const std::vector<FitSample> samples = {
      sample(LayerClass::conv_spatial, 0, 1, false, 1), sample(LayerClass::conv_spatial, 0, 2, false, 1),
      sample(LayerClass::batch_norm, 1, 1, false, 1),   sample(LayerClass::batch_norm, 1, 2, false, 1),
      sample(LayerClass::batch_norm, 1, 4, false, 1),   sample(LayerClass::batch_norm, 1, 4, true, 1),
      sample(LayerClass::batch_norm, 1, 1, false, 3)};
  const auto free = free_names(samples);
  // Free: what these samples show (a term added later may join them, in these classes only).
  for (const char* name :
       {"conv_spatial.efficiency.forward", "conv_spatial.overhead_seconds.forward", "conv_spatial.contention",
        "batch_norm.efficiency.backward_data", "batch_norm.overhead_seconds.backward_data", "batch_norm.contention",
        "batch_norm.coherency", "batch_norm.smt_gain", "batch_norm.corun_slowdown", "bandwidth_efficiency",
        "smooth_max_exponent"})
    CHECK(free.count(name) == 1);
  // Pinned: what they do not show.
  for (const char* name : {"conv_spatial.efficiency.backward_data", "conv_spatial.overhead_seconds.backward_weights",
                           "conv_spatial.coherency", "conv_spatial.smt_gain", "conv_spatial.corun_slowdown",
                           "batch_norm.efficiency.forward", "pooling_max.efficiency.forward", "pooling_max.contention"})
    CHECK(free.count(name) == 0);
  for (const std::string& name : free) {
    INFO(name);
    const auto& descriptor = parameter_table()[parameter_index(name)];
    CHECK((descriptor.layer_class == LayerClass::conv_spatial || descriptor.layer_class == LayerClass::batch_norm ||
           descriptor.layer_class == LayerClass::count_));
  }
}

TEST_CASE("a calibration file that lacks a newer parameter loads it at its prior, pinned") {
  const json reference = reference_calibration();
  const Calibration full = load(reference);
  const std::string name = "conv_spatial.efficiency.forward";
  const int index = parameter_index(name);
  const double prior = parameter_table()[index].prior;
  REQUIRE(flatten(full.parameters)[index] != prior);  // the reference fitted it: the test can tell

  const Calibration older = load(without_parameter(reference, name));
  const auto values = flatten(older.parameters);
  const auto full_values = flatten(full.parameters);
  for (std::size_t other = 0; other < values.size(); ++other)
    CHECK(values[other] == (static_cast<int>(other) == index ? prior : full_values[other]));
  REQUIRE(older.bootstrap_parameters.size() == full.bootstrap_parameters.size());
  for (std::size_t replicate = 0; replicate < older.bootstrap_parameters.size(); ++replicate) {
    CHECK(older.bootstrap_parameters[replicate][index] == prior);
    CHECK(older.bootstrap_parameters[replicate][index + 1] == full.bootstrap_parameters[replicate][index + 1]);
  }
  REQUIRE(older.summary.parameters.size() == parameter_table().size());
  const ParameterEstimate& estimate = older.summary.parameters[index];
  CHECK(estimate.name == name);
  CHECK(estimate.pinned);
  CHECK(estimate.value == prior);
  CHECK(estimate.low == prior);
  CHECK(estimate.high == prior);

  // Saved again, it is a file of this version: every parameter present, and it loads the same.
  const Calibration again = load(json::parse(to_json_text(older)));
  CHECK(flatten(again.parameters) == values);
  CHECK(again.bootstrap_parameters == older.bootstrap_parameters);
}

TEST_CASE("a parameter the file's writer listed but whose value is missing is refused, naming it") {
  json damaged = reference_calibration();
  damaged["parameters"].erase("batch_norm.contention");
  const auto calibration = calibration_from_json_text(damaged.dump(), "damaged.json");
  REQUIRE_FALSE(calibration);
  CHECK(calibration.error().message == "damaged.json: (/parameters/batch_norm.contention) is missing");
}

TEST_CASE("bootstrap columns are read by the names of the file's fit report, in its order") {
  const json reference = reference_calibration();
  const Calibration full = load(reference);
  json reordered = reference;
  auto& estimates = reordered["fit"]["parameters"];
  std::reverse(estimates.begin(), estimates.end());
  for (auto& replicate : reordered["bootstrap_parameters"]) std::reverse(replicate.begin(), replicate.end());
  // A parameter of a newer dnntune is dropped, with its column.
  estimates.push_back(
      {{"name", "conv_spatial.newer_term"}, {"value", 1.0}, {"low", 1.0}, {"high", 1.0}, {"pinned", true}});
  for (auto& replicate : reordered["bootstrap_parameters"]) replicate.push_back(1.0);
  reordered["parameters"]["conv_spatial.newer_term"] = 1.0;

  const Calibration read = load(reordered);
  CHECK(flatten(read.parameters) == flatten(full.parameters));
  CHECK(read.bootstrap_parameters == full.bootstrap_parameters);
  REQUIRE(read.summary.parameters.size() == full.summary.parameters.size());
  for (std::size_t index = 0; index < read.summary.parameters.size(); ++index) {
    CHECK(read.summary.parameters[index].name == full.summary.parameters[index].name);
    CHECK(read.summary.parameters[index].value == full.summary.parameters[index].value);
    CHECK(read.summary.parameters[index].low == full.summary.parameters[index].low);
  }
  CHECK(to_json_text(read) == to_json_text(full));
}

TEST_CASE("the fit report gives each free parameter its unit from the table") {
  const std::string report = fit_report_text(load(reference_calibration()));
  CHECK(report.find("of FMA peak\n") != std::string::npos);
  CHECK(report.find("of triad bandwidth\n") != std::string::npos);
}
