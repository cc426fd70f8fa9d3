// cli/scale_command.cpp — `dnntune scale`: predicted images/s, speed-up and efficiency over a
// range of node counts, as a table and optionally an SVG plot.
#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_commands.hpp"
#include "cli/launch_options.hpp"
#include "cli/model_options.hpp"
#include "cli/option_table.hpp"
#include "frontend/answers.hpp"
#include "model/scaling.hpp"

namespace dnntune::cli {
namespace {

struct ScaleOptions {
  std::string model;
  std::string nodes = frontend::default_scale_nodes;
  std::string plot_path;
  ConfigurationOptions configuration;
  ModelSourceOptions source;
  OutputOptions output;
  std::string allocator;               // --allocator; empty: the recommended setup's
  frontend::GivenLayout given_layout;  // without --ppn/--threads: the recommended layout
};

void run_scale(const ScaleOptions& options) {
  if (const auto gpu = gpu_machine(options.source)) {
    if (!options.plot_path.empty())
      fail(bad_input(long_name(option_rows::plot) + " draws CPU scaling curves; leave it out for a GPU machine"));
    if (!options.allocator.empty()) fail(bad_input(frontend::gpu_allocator_refusal()));
    return run_gpu_scale(options.model, *gpu, options.configuration, options.nodes, options.output);
  }
  frontend::ScaleRequest request{{options.model, value_or_fail(configuration_from(options.configuration)),
                                  options.given_layout, options.allocator},
                                 value_or_fail(model::parse_node_counts(options.nodes))};
  const auto answer = value_or_fail(frontend::answer_scale({options.source, "", print_progress}, request));
  if (!options.plot_path.empty()) {
    const auto& first = answer.rows.front().prediction;
    model::TrainingConfiguration per_node = first.configuration;
    per_node.nodes = 1;
    write_output(model::scaling_svg(answer.rows, first.network + " on " + first.machine + ": " +
                                                     model::describe(per_node) + " per node, " + per_node.fabric),
                 options.plot_path);
  }
  if (options.output.json) return write_output(frontend::scaling_document(answer).dump(2) + "\n", options.output.path);
  write_output(model::scaling_text(answer.rows) + setup_allocator_text(answer.allocator) +
                   (answer.layout_basis.empty() ? "" : "note: " + answer.layout_basis + "\n"),
               options.output.path);
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
  add_allocator_option(*command, options.allocator);
  add_model_source_options(*command, options.source);
  add_output_options(*command, options.output);
  command->callback([command] {
    options.given_layout = given_layout(*command, options.configuration);
    run_scale(options);
  });
}

}  // namespace dnntune::cli
