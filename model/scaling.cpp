// model/scaling.cpp — see scaling.hpp.
#include "model/scaling.hpp"
#include "common/text_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "model/report.hpp"

namespace dnntune::model {
namespace {

Expected<int> parse_count(const std::string& text) {
  try {
    std::size_t used = 0;
    const long value = std::stol(text, &used);
    if (used == text.size() && value >= 1 && value <= 1 << 20) return static_cast<int>(value);
  } catch (const std::exception&) {
  }
  return bad_input("\"" + text + "\" is not a node count (a whole number from 1)");
}

}  // namespace

Expected<std::vector<int>> parse_node_counts(const std::string& text) {
  std::vector<int> counts;
  const auto range = text.find("..");
  if (range != std::string::npos) {
    auto first = parse_count(text.substr(0, range));
    auto last = parse_count(text.substr(range + 2));
    if (!first) return first.error();
    if (!last) return last.error();
    if (*first > *last) return bad_input("node range " + text + " runs backwards");
    for (long count = *first; count < *last; count *= 2) counts.push_back(static_cast<int>(count));
    counts.push_back(*last);
    return counts;
  }
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    auto count = parse_count(item);
    if (!count) return count.error();
    counts.push_back(*count);
  }
  if (counts.empty()) return bad_input("no node counts in \"" + text + "\"");
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

Expected<std::vector<ScalingRow>> predict_scaling(const Predictor& predictor, const workloads::Network& network,
                                                  const TrainingConfiguration& configuration,
                                                  const std::vector<int>& node_counts) {
  TrainingConfiguration one_node = configuration;
  one_node.nodes = 1;
  auto single = predictor.predict(network, one_node, false);
  if (!single) return single.error();
  std::vector<ScalingRow> rows;
  for (int nodes : node_counts) {
    TrainingConfiguration at = configuration;
    at.nodes = nodes;
    auto prediction = predictor.predict(network, at);
    if (!prediction) return prediction.error();
    ScalingRow row;
    row.nodes = nodes;
    row.speedup = prediction->images_per_second / single->images_per_second;
    row.efficiency = row.speedup / nodes;
    row.prediction = std::move(*prediction);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string scaling_text(const std::vector<ScalingRow>& rows) {
  if (rows.empty()) return "";
  std::ostringstream out;
  const Prediction& first = rows.front().prediction;
  TrainingConfiguration per_node = first.configuration;
  per_node.nodes = 1;
  out << first.network << " on " << first.machine << " (" << first.backend << "), " << describe(per_node)
      << " per node, fabric " << first.configuration.fabric << "\n";
  char line[200];
  std::snprintf(line, sizeof line, "%8s %12s %23s %9s %10s %12s %12s\n", "nodes", "images/s", "90% band", "speed-up",
                "efficiency", "iteration", "exposed comm");
  out << line;
  for (const ScalingRow& row : rows) {
    const Prediction& p = row.prediction;
    std::snprintf(line, sizeof line, "%8d %12.1f %11.1f - %-9.1f %9.1fx %9.1f%% %12s %12s\n", row.nodes,
                  p.images_per_second, p.images_per_second_low, p.images_per_second_high, row.speedup,
                  100 * row.efficiency, format_seconds(p.iteration_seconds).c_str(),
                  format_seconds(p.terms.exposed_communication).c_str());
    out << line;
  }
  return out.str();
}

nlohmann::json scaling_json(const std::vector<ScalingRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const ScalingRow& row : rows) {
    auto entry = prediction_json(row.prediction);
    entry["speedup"] = row.speedup;
    entry["efficiency"] = row.efficiency;
    out.push_back(entry);
  }
  return out;
}

std::string scaling_svg(const std::vector<ScalingRow>& rows, const std::string& title) {
  const double width = 720, height = 460, left = 80, right = 30, top = 50, bottom = 60;
  const double plot_width = width - left - right, plot_height = height - top - bottom;
  double max_nodes = 1, max_rate = 1, min_rate = 1e300;
  for (const ScalingRow& row : rows) {
    max_nodes = std::max(max_nodes, static_cast<double>(row.nodes));
    max_rate = std::max({max_rate, row.prediction.images_per_second_high,
                         rows.front().prediction.images_per_second / rows.front().nodes * row.nodes});
    min_rate = std::min(min_rate, row.prediction.images_per_second_low);
  }
  const double min_nodes = rows.empty() ? 1 : rows.front().nodes;
  // Log-log axes: ideal scaling is a straight line, and 1..1024 nodes fit one picture.
  const double x_span = std::max(1e-9, std::log2(max_nodes) - std::log2(min_nodes));
  const double y_low = std::log10(std::max(1e-9, min_rate)), y_high = std::log10(max_rate);
  const double y_span = std::max(1e-9, y_high - y_low);
  auto x_of = [&](double nodes) { return left + plot_width * (std::log2(nodes) - std::log2(min_nodes)) / x_span; };
  auto y_of = [&](double rate) { return top + plot_height * (1 - (std::log10(rate) - y_low) / y_span); };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << width / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" << title << "</text>\n"
      << "<line x1=\"" << left << "\" y1=\"" << top + plot_height << "\" x2=\"" << left + plot_width << "\" y2=\""
      << top + plot_height << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << top + plot_height
      << "\" stroke=\"black\"/>\n";
  for (const ScalingRow& row : rows)
    svg << "<text x=\"" << x_of(row.nodes) << "\" y=\"" << top + plot_height + 18 << "\" text-anchor=\"middle\">"
        << row.nodes << "</text>\n";
  for (double decade = std::floor(y_low); decade <= std::ceil(y_high); ++decade)
    for (double mantissa : {1.0, 2.0, 5.0}) {
      const double rate = mantissa * std::pow(10, decade);
      if (rate < std::pow(10, y_low) || rate > max_rate) continue;
      svg << "<line x1=\"" << left << "\" y1=\"" << y_of(rate) << "\" x2=\"" << left + plot_width << "\" y2=\""
          << y_of(rate) << "\" stroke=\"#e4e4e4\"/>\n"
          << "<text x=\"" << left - 6 << "\" y=\"" << y_of(rate) + 4 << "\" text-anchor=\"end\">" << rate << "</text>\n";
    }
  svg << "<text x=\"" << left + plot_width / 2 << "\" y=\"" << height - 16 << "\" text-anchor=\"middle\">nodes</text>\n"
      << "<text x=\"18\" y=\"" << top + plot_height / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 18 "
      << top + plot_height / 2 << ")\">images/s</text>\n";
  // The band as a polygon: high edge left to right, low edge back.
  svg << "<polygon fill=\"#9ecae1\" fill-opacity=\"0.5\" stroke=\"none\" points=\"";
  for (const ScalingRow& row : rows) svg << x_of(row.nodes) << "," << y_of(row.prediction.images_per_second_high) << " ";
  for (auto row = rows.rbegin(); row != rows.rend(); ++row)
    svg << x_of(row->nodes) << "," << y_of(row->prediction.images_per_second_low) << " ";
  svg << "\"/>\n";
  const double per_node = rows.empty() ? 0 : rows.front().prediction.images_per_second / rows.front().nodes;
  svg << "<polyline fill=\"none\" stroke=\"#999\" stroke-dasharray=\"6,4\" points=\"";
  for (const ScalingRow& row : rows) svg << x_of(row.nodes) << "," << y_of(per_node * row.nodes) << " ";
  svg << "\"/>\n<polyline fill=\"none\" stroke=\"#08519c\" stroke-width=\"2\" points=\"";
  for (const ScalingRow& row : rows) svg << x_of(row.nodes) << "," << y_of(row.prediction.images_per_second) << " ";
  svg << "\"/>\n";
  for (const ScalingRow& row : rows)
    svg << "<circle cx=\"" << x_of(row.nodes) << "\" cy=\"" << y_of(row.prediction.images_per_second)
        << "\" r=\"3\" fill=\"#08519c\"><title>" << row.nodes << " nodes: " << format_fixed(row.prediction.images_per_second, 0)
        << " images/s, " << format_fixed(100 * row.efficiency, 0) << "% efficiency</title></circle>\n";
  svg << "<text x=\"" << left + 10 << "\" y=\"" << top + 14 << "\" fill=\"#08519c\">predicted (90% band shaded)</text>\n"
      << "<text x=\"" << left + 10 << "\" y=\"" << top + 30 << "\" fill=\"#777\">ideal linear scaling</text>\n"
      << "</svg>\n";
  return svg.str();
}

}  // namespace dnntune::model
