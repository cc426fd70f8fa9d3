// cli/models_command.cpp — `dnntune models`: the built-in networks, a line each, and
// `dnntune models show MODEL`: one network's FLOPs, multiply-adds and bytes per pass, totals,
// and (--layers) every layer. MODEL is a built-in name or a network JSON file, as everywhere.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command_support.hpp"
#include "cli/commands.hpp"
#include "cli/option_table.hpp"
#include "cli/number_rules.hpp"
#include "workloads/costs.hpp"
#include "workloads/network_json.hpp"
#include "workloads/zoo.hpp"
#include "common/text_format.hpp"

namespace dnntune::cli {
namespace {

using workloads::Layer;
using workloads::Network;
using workloads::NetworkCost;
using workloads::PassCost;

struct ShowOptions {
  std::string model;
  bool layers = false;
  std::int64_t batch = 1;
  OutputOptions output;
};

// Rows of cells printed in aligned columns: numbers right-aligned, text left-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  std::string text() const {
    std::vector<std::size_t> widths;
    std::vector<bool> numeric;  // every cell below the header is a number (or "-")
    for (std::size_t index = 0; index < rows_.size(); ++index)
      for (std::size_t column = 0; column < rows_[index].size(); ++column) {
        if (widths.size() <= column) {
          widths.push_back(0);
          numeric.push_back(true);
        }
        const std::string& cell = rows_[index][column];
        widths[column] = std::max(widths[column], cell.size());
        if (index > 0 && !is_number(cell)) numeric[column] = false;
      }
    std::string out;
    for (const auto& row : rows_) {
      std::string line;
      for (std::size_t column = 0; column < row.size(); ++column) {
        const std::string& cell = row[column];
        const std::string padding(widths[column] - cell.size(), ' ');
        line += (column ? "  " : "") + (numeric[column] ? padding + cell : cell + padding);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  static bool is_number(const std::string& cell) {
    return cell == "-" || (!cell.empty() && cell.find_first_not_of("0123456789.,") == std::string::npos);
  }
  std::vector<std::vector<std::string>> rows_;
};

std::string giga(std::int64_t value) { return format_fixed(static_cast<double>(value) / 1e9, 3); }
std::string mega(std::int64_t value) { return format_fixed(static_cast<double>(value) / 1e6, 3); }

// 25557032 -> "25,557,032": exact counts stay readable.
std::string grouped(std::int64_t value) {
  std::string digits = std::to_string(value);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(at, ",");
  return digits;
}

void run_list(const OutputOptions& output) {
  Table table(
      {"network", "input", "parameters", "fwd GMAC/img", "fwd GFLOP/img", "train GFLOP/img", "layers", "distinct"});
  nlohmann::json models = nlohmann::json::array();
  for (const std::string& name : workloads::known_network_names()) {
    const Network network = value_or_fail(workloads::build_network(name));
    const NetworkCost cost = value_or_fail(workloads::network_cost(network, 1));
    const workloads::Shape input = network.input_shape();
    table.add({name, to_string(input), grouped(cost.parameters), giga(cost.forward.macs), giga(cost.forward.flops),
               giga(cost.training().flops), std::to_string(cost.layers), std::to_string(cost.distinct_layers)});
    models.push_back({{"name", name},
                      {"input", {input.channels, input.height, input.width}},
                      {"parameters", cost.parameters},
                      {"forward_macs_per_image", cost.forward.macs},
                      {"forward_flops_per_image", cost.forward.flops},
                      {"training_flops_per_image", cost.training().flops},
                      {"layers", cost.layers},
                      {"distinct_layers", cost.distinct_layers}});
  }
  if (output.json) {
    const nlohmann::json document{{"schema", "dnntune-model-list"}, {"schema_version", 1}, {"models", models}};
    write_output(document.dump(2) + "\n", output.path);
    return;
  }
  write_output(table.text() +
                   "GMAC: multiply-adds of convolutions and linear layers. GFLOP: a multiply-add is 2, plus\n"
                   "batch norm, activations, pooling and the loss. Training: forward + backward-data +\n"
                   "backward-weights + gradient sums, per image. Details: dnntune models show NAME [--layers]\n",
               output.path);
}

std::string layer_table(const Network& network, std::int64_t batch) {
  Table table({"id", "name", "output", "params", "fwd MFLOP", "bwd-d MFLOP", "bwd-w MFLOP", "fwd MB", "bwd-d MB",
               "bwd-w MB", "kept MB", "inputs", "descriptor"});
  for (std::size_t id = 0; id < network.layers.size(); ++id) {
    const Layer& layer = network.layers[id];
    const workloads::LayerCost cost = workloads::layer_cost(layer, batch);
    std::string inputs;
    for (const int input : layer.inputs) inputs += (inputs.empty() ? "" : ",") + std::to_string(input);
    table.add({std::to_string(id), layer.name, to_string(layer.output), grouped(layer.parameters),
               mega(cost.forward.flops), mega(cost.backward_data.flops), mega(cost.backward_weights.flops),
               mega(cost.forward.bytes), mega(cost.backward_data.bytes), mega(cost.backward_weights.bytes),
               mega(cost.saved_activation_bytes), inputs.empty() ? "-" : inputs, layer.descriptor});
  }
  return table.text();
}

std::string totals_text(const Network& network, const NetworkCost& cost) {
  std::string text = network.name + ": " + std::to_string(cost.layers) + " layers (" +
                     std::to_string(cost.distinct_layers) + " distinct), input " + to_string(network.input_shape()) +
                     ", batch " + std::to_string(cost.batch) + "\n";
  text += "parameters " + grouped(cost.parameters) + "; gradients to all-reduce " + mega(cost.gradient_bytes) +
          " MB (fp32); activations kept for backward " + mega(cost.activation_bytes_kept) + " MB\n\n";
  Table table({"pass", "GFLOP", "GMAC", "MB moved"});
  const auto row = [&table](const std::string& name, const PassCost& pass) {
    table.add({name, giga(pass.flops), giga(pass.macs), mega(pass.bytes)});
  };
  row("forward", cost.forward);
  row("backward-data", cost.backward_data);
  row("backward-weights", cost.backward_weights);
  row("gradient sums", cost.gradient_sums);
  row("training total", cost.training());
  table.add({"optimizer update", giga(cost.optimizer_update_flops), "-", mega(cost.optimizer_update_bytes)});
  return text + table.text() +
         "Per iteration at this batch. A multiply-add is 2 FLOPs; GMAC counts convolutions and linear\n"
         "layers. Bytes: the least each layer reads and writes (fp32). Gradient sums: tensors read by\n"
         "several layers. Optimizer: SGD with momentum and weight decay, independent of the batch.\n";
}

void run_show(const ShowOptions& options) {
  const Network network = value_or_fail(workloads::load_network(options.model));
  const NetworkCost cost = value_or_fail(workloads::network_cost(network, options.batch));
  if (options.output.json) {
    const nlohmann::json document = value_or_fail(workloads::network_to_json(network, options.batch));
    write_output(document.dump(2) + "\n", options.output.path);
    return;
  }
  std::string text;
  if (options.layers) text += layer_table(network, options.batch) + "\n";
  write_output(text + totals_text(network, cost), options.output.path);
}

}  // namespace

void add_models_command(CLI::App& root) {
  static OutputOptions list_output;
  static ShowOptions show;
  CLI::App* command =
      root.add_subcommand("models", "List the built-in networks with their parameters and FLOPs per image.");
  command->require_subcommand(0, 1);
  add_output_options(*command, list_output);

  CLI::App* show_command =
      command->add_subcommand("show", "One network's FLOPs, multiply-adds and bytes per pass, and its totals.");
  show_command->add_option("model", show.model, "A built-in network name or a network JSON file")
      ->required()
      ->option_text("MODEL");
  add_flag(*show_command, option_rows::layers, show.layers);
  add_value(*show_command, option_rows::batch, show.batch)->capture_default_str();
  add_output_options(*show_command, show.output);
  show_command->callback([] { run_show(show); });

  // CLI11 runs this after a subcommand's callback: list only when no subcommand was given.
  command->callback([command, show_command] {
    if (!command->got_subcommand(show_command)) run_list(list_output);
  });
}

}  // namespace dnntune::cli
