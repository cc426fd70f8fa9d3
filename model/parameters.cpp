// model/parameters.cpp — see parameters.hpp.
#include "model/parameters.hpp"

namespace dnntune::model {
namespace {

const char* pass_names[pass_count] = {"forward", "backward_data", "backward_weights"};
constexpr int per_class = 10;  // 3 efficiencies, 3 overheads, contention, coherency, smt_gain, corun

std::vector<ParameterInfo> make_table() {
  std::vector<ParameterInfo> table;
  for (int index = 0; index < layer_class_count; ++index) {
    const auto layer_class = static_cast<LayerClass>(index);
    const std::string prefix = class_name(layer_class) + ".";
    for (int pass = 0; pass < pass_count; ++pass)
      table.push_back({prefix + "efficiency." + pass_names[pass], 1e-4, 1.2, true, layer_class});
    for (int pass = 0; pass < pass_count; ++pass)
      table.push_back({prefix + "overhead_seconds." + pass_names[pass], 1e-7, 0.05, true, layer_class});
    table.push_back({prefix + "contention", 0.0, 1.0, false, layer_class});
    table.push_back({prefix + "coherency", 0.0, 0.05, false, layer_class});
    table.push_back({prefix + "smt_gain", -0.6, 0.8, false, layer_class});
    table.push_back({prefix + "corun_slowdown", 0.0, 2.0, false, layer_class});
  }
  table.push_back({"bandwidth_efficiency", 0.05, 2.0, true, LayerClass::count_});
  table.push_back({"smooth_max_exponent", 1.0, 10.0, false, LayerClass::count_});
  return table;
}

}  // namespace

const std::vector<ParameterInfo>& parameter_table() {
  static const std::vector<ParameterInfo> table = make_table();
  return table;
}

std::vector<double> flatten(const ModelParameters& parameters) {
  std::vector<double> values;
  values.reserve(parameter_table().size());
  for (const ClassParameters& of_class : parameters.classes) {
    for (double value : of_class.efficiency) values.push_back(value);
    for (double value : of_class.overhead_seconds) values.push_back(value);
    values.push_back(of_class.contention);
    values.push_back(of_class.coherency);
    values.push_back(of_class.smt_gain);
    values.push_back(of_class.corun_slowdown);
  }
  values.push_back(parameters.bandwidth_efficiency);
  values.push_back(parameters.smooth_max_exponent);
  return values;
}

ModelParameters unflatten(const std::vector<double>& values) {
  ModelParameters parameters;
  std::size_t at = 0;
  for (ClassParameters& of_class : parameters.classes) {
    for (double& value : of_class.efficiency) value = values[at++];
    for (double& value : of_class.overhead_seconds) value = values[at++];
    of_class.contention = values[at++];
    of_class.coherency = values[at++];
    of_class.smt_gain = values[at++];
    of_class.corun_slowdown = values[at++];
  }
  parameters.bandwidth_efficiency = values[at++];
  parameters.smooth_max_exponent = values[at++];
  static_assert(per_class == 10, "flatten/unflatten/make_table must agree");
  return parameters;
}

int parameter_index(const std::string& name) {
  const auto& table = parameter_table();
  for (std::size_t index = 0; index < table.size(); ++index)
    if (table[index].name == name) return static_cast<int>(index);
  return -1;
}

}  // namespace dnntune::model
