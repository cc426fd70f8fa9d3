// model/scaling.cpp — see scaling.hpp.
#include "model/scaling.hpp"
#include "common/text_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/number_grammar.hpp"
#include "model/plausibility.hpp"
#include "model/report.hpp"

namespace dnntune::model {
Expected<std::vector<int>> parse_node_counts(const std::string& text, const std::string& option) {
  // The one list grammar (common/number_grammar.hpp): "16", "1,2,4", "1..256" (powers of two).
  const auto listed = parse_checked_list(text, lists::node_counts, option);
  if (!listed) return bad_input(listed.error().message + " (node counts: 16, a list 1,2,4 or a range 1..256)");
  std::vector<int> counts(listed->begin(), listed->end());
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
  bool any_unknown = false;
  for (const ScalingRow& row : rows) {
    const Prediction& p = row.prediction;
    // A band wider than the gate's ratio is no figure (model/plausibility.hpp), as predict says.
    any_unknown = any_unknown || !band_is_known(p.images_per_second_low, p.images_per_second_high);
    // Three significant figures: 0.52 and 52000 images/s alike, no false precision.
    std::snprintf(
        line, sizeof line, "%8d %12s %11s - %-9s %9sx %9s%% %12s %12s\n", row.nodes,
        images_per_second_cell(p.images_per_second, p.images_per_second_low, p.images_per_second_high).c_str(),
        format_significant(p.images_per_second_low, 3).c_str(), format_significant(p.images_per_second_high, 3).c_str(),
        format_significant(row.speedup, 3).c_str(), format_fixed(100 * row.efficiency, 1).c_str(),
        format_seconds(p.iteration_seconds).c_str(), format_seconds(p.terms.exposed_communication).c_str());
    out << line;
  }
  if (any_unknown) out << unknown_rows_note();
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

namespace {

// One panel of the scaling plot: a y axis with labelled grid lines over a shared log2 node axis.
struct Panel {
  double top, height;
  double y_low, y_high;  // in axis units (log10 images/s, or percent)
  double y(double value) const { return top + height * (1 - (value - y_low) / std::max(1e-9, y_high - y_low)); }
};

}  // namespace

// Two panels over nodes on a log2 axis: images/s (log scale) with the 90% band and the ideal
// line, and scaling efficiency in percent with 100% as the ideal. On the log-log panel alone 93%
// efficiency drew 0.16 px from the ideal line; the efficiency panel shows every lost point.
std::string scaling_svg(const std::vector<ScalingRow>& rows, const std::string& title) {
  const double width = 720, height = 620, left = 80, right = 30, plot_width = width - left - right;
  double max_nodes = 1, max_rate = 1, min_rate = 1e300, lowest_efficiency = 1, highest_efficiency = 1;
  const double per_node = rows.empty() ? 1 : rows.front().prediction.images_per_second / rows.front().nodes;
  for (const ScalingRow& row : rows) {
    max_nodes = std::max(max_nodes, static_cast<double>(row.nodes));
    max_rate = std::max({max_rate, row.prediction.images_per_second_high, per_node * row.nodes});
    min_rate = std::min(min_rate, row.prediction.images_per_second_low);
    lowest_efficiency = std::min(lowest_efficiency, row.efficiency);
    highest_efficiency = std::max(highest_efficiency, row.efficiency);
  }
  const double min_nodes = rows.empty() ? 1 : rows.front().nodes;
  const double x_span = std::max(1e-9, std::log2(max_nodes) - std::log2(min_nodes));
  auto x_of = [&](double nodes) {
    return rows.size() < 2 ? left + plot_width / 2
                           : left + plot_width * (std::log2(nodes) - std::log2(min_nodes)) / x_span;
  };
  const Panel rate{50, 300, std::log10(std::max(1e-9, min_rate)), std::log10(max_rate)};
  // Efficiency in steps of 1, 2, 5, 10 or 20 points, so its labels stay few and round.
  const double span = 100 * (highest_efficiency - lowest_efficiency);
  const double step = span <= 4 ? 1 : span <= 10 ? 2 : span <= 25 ? 5 : span <= 60 ? 10 : 20;
  const Panel efficiency{410, 150, std::floor(100 * lowest_efficiency / step - 1e-9) * step,
                         std::ceil(100 * highest_efficiency / step + 1e-9) * step};

  std::ostringstream svg;
  auto line = [&](double x1, double y1, double x2, double y2, const char* style) {
    svg << "<line x1=\"" << x1 << "\" y1=\"" << y1 << "\" x2=\"" << x2 << "\" y2=\"" << y2 << "\" " << style << "/>\n";
  };
  auto text = [&](double x, double y, const char* anchor, const std::string& content, const char* extra = "") {
    svg << "<text x=\"" << x << "\" y=\"" << y << "\" text-anchor=\"" << anchor << "\" " << extra << ">"
        << xml_escaped(content) << "</text>\n";
  };
  auto axes = [&](const Panel& panel, const std::string& label) {
    line(left, panel.top + panel.height, left + plot_width, panel.top + panel.height, "stroke=\"black\"");
    line(left, panel.top, left, panel.top + panel.height, "stroke=\"black\"");
    const double middle = panel.top + panel.height / 2;
    svg << "<text x=\"18\" y=\"" << middle << "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " << middle << ")\">"
        << xml_escaped(label) << "</text>\n";
    for (const ScalingRow& row : rows)
      text(x_of(row.nodes), panel.top + panel.height + 16, "middle", std::to_string(row.nodes));
  };
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  text(width / 2, 24, "middle", title, "font-size=\"15\"");

  axes(rate, "images/s");
  for (double decade = std::floor(rate.y_low); decade <= std::ceil(rate.y_high); ++decade)
    for (double mantissa : {1.0, 2.0, 5.0}) {
      const double value = mantissa * std::pow(10, decade);
      if (std::log10(value) < rate.y_low || std::log10(value) > rate.y_high) continue;
      line(left, rate.y(std::log10(value)), left + plot_width, rate.y(std::log10(value)), "stroke=\"#e4e4e4\"");
      text(left - 6, rate.y(std::log10(value)) + 4, "end", format_significant(value, 1));
    }
  // the band: high edge, low edge back
  svg << "<polygon fill=\"#9ecae1\" fill-opacity=\"0.5\" stroke=\"none\" points=\"";
  for (const ScalingRow& row : rows)
    svg << x_of(row.nodes) << "," << rate.y(std::log10(row.prediction.images_per_second_high)) << " ";
  for (auto row = rows.rbegin(); row != rows.rend(); ++row)
    svg << x_of(row->nodes) << "," << rate.y(std::log10(row->prediction.images_per_second_low)) << " ";
  svg << "\"/>\n<polyline fill=\"none\" stroke=\"#999\" stroke-dasharray=\"6,4\" points=\"";
  for (const ScalingRow& row : rows) svg << x_of(row.nodes) << "," << rate.y(std::log10(per_node * row.nodes)) << " ";
  svg << "\"/>\n<polyline fill=\"none\" stroke=\"#08519c\" stroke-width=\"2\" points=\"";
  for (const ScalingRow& row : rows)
    svg << x_of(row.nodes) << "," << rate.y(std::log10(row.prediction.images_per_second)) << " ";
  svg << "\"/>\n";
  text(left + 10, rate.top + 14, "start", "predicted images/s (90% band shaded)", "fill=\"#08519c\"");
  text(left + 10, rate.top + 30, "start", "ideal: linear in nodes", "fill=\"#777\"");

  axes(efficiency, "efficiency");
  for (double percent = efficiency.y_low; percent <= efficiency.y_high + 1e-9; percent += step) {
    line(left, efficiency.y(percent), left + plot_width, efficiency.y(percent), "stroke=\"#e4e4e4\"");
    text(left - 6, efficiency.y(percent) + 4, "end", format_fixed(percent, 0) + "%");
  }
  line(left, efficiency.y(100), left + plot_width, efficiency.y(100), "stroke=\"#999\" stroke-dasharray=\"6,4\"");
  svg << "<polyline fill=\"none\" stroke=\"#08519c\" stroke-width=\"2\" points=\"";
  for (const ScalingRow& row : rows) svg << x_of(row.nodes) << "," << efficiency.y(100 * row.efficiency) << " ";
  svg << "\"/>\n";
  for (const ScalingRow& row : rows)
    svg << "<circle cx=\"" << x_of(row.nodes) << "\" cy=\"" << efficiency.y(100 * row.efficiency)
        << "\" r=\"3\" fill=\"#08519c\"><title>"
        << xml_escaped(std::to_string(row.nodes) +
                       " nodes: " + format_significant(row.prediction.images_per_second, 3) + " images/s (90% band " +
                       format_significant(row.prediction.images_per_second_low, 3) + "-" +
                       format_significant(row.prediction.images_per_second_high, 3) + "), " +
                       format_significant(100 * row.efficiency, 3) + "% efficiency")
        << "</title></circle>\n";
  text(width / 2, height - 12, "middle", "nodes");
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace dnntune::model
