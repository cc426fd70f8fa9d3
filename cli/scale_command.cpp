// cli/scale_command.cpp — `dnntune scale`: predicted images/s, speed-up and efficiency over a
// range of node counts, as a table and optionally an SVG plot.
#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_commands.hpp"
#include "cli/model_options.hpp"
#include "cli/option_table.hpp"
#include "common/json_file.hpp"
#include "frontend/request_defaults.hpp"
#include "model/scaling.hpp"
#include "workloads/zoo.hpp"

namespace dnntune::cli {
namespace {

struct ScaleOptions {
  std::string model;
  std::string nodes = "1..1024";
  std::string plot_path;
  ConfigurationOptions configuration;
  ModelSourceOptions source;
  OutputOptions output;
  frontend::GivenLayout given_layout;  // without --ppn/--threads: the recommended layout
};

void run_scale(const ScaleOptions& options) {
  const auto network = value_or_fail(workloads::load_network(options.model));
  if (const auto gpu = gpu_machine(options.source)) {
    if (!options.plot_path.empty()) fail(bad_input("--plot draws CPU scaling curves; leave it out for a GPU machine"));
    return run_gpu_scale(network, *gpu, options.configuration, options.nodes, options.output);
  }
  const auto asked = value_or_fail(configuration_from(options.configuration));
  const auto node_counts = value_or_fail(model::parse_node_counts(options.nodes));
  const auto predictor =
      value_or_fail(load_predictor(options.source, {{options.model}, {asked.batch_per_process}, options.source.backend}));
  // The layout is per node: the one recommended for one node.
  const auto defaulted = value_or_fail(frontend::with_default_layout(predictor, network, asked, options.given_layout));
  const model::TrainingConfiguration& configuration = defaulted.configuration;
  const auto rows = value_or_fail(model::predict_scaling(predictor, network, configuration, node_counts));
  if (!options.plot_path.empty()) {
    const auto& first = rows.front().prediction;
    model::TrainingConfiguration per_node = configuration;
    per_node.nodes = 1;
    write_output(model::scaling_svg(rows, first.network + " on " + first.machine + ": " + model::describe(per_node) +
                                              " per node, " + configuration.fabric),
                 options.plot_path);
  }
  const std::string note = defaulted.layout_basis.empty() ? "" : "note: " + defaulted.layout_basis + "\n";
  if (!options.output.json) return write_output(model::scaling_text(rows) + note, options.output.path);
  auto document = schema_head("dnntune.scaling", 1);
  document["rows"] = model::scaling_json(rows);
  if (!defaulted.layout_basis.empty()) document["layout_basis"] = defaulted.layout_basis;
  write_output(document.dump(2) + "\n", options.output.path);
}

}  // namespace

void add_scale_command(CLI::App& root) {
  static ScaleOptions options;
  CLI::App* command = root.add_subcommand(
      "scale", "Predict how training scales over nodes: images/s, speed-up and efficiency per node count.");
  add_value(*command, option_rows::model, options.model)->required();
  add_list(*command, option_rows::nodes, options.nodes)->capture_default_str();
  add_value(*command, option_rows::plot, options.plot_path)->check(output_file());
  add_configuration_options(*command, options.configuration, false);
  add_model_source_options(*command, options.source);
  add_output_options(*command, options.output);
  command->callback([command] {
    options.given_layout = {command->count("--ppn") > 0, command->count("--threads") > 0, options.configuration.configuration.smt};
    run_scale(options);
  });
}

}  // namespace dnntune::cli
