// cli/number_rules.cpp — see number_rules.hpp.
#include "cli/number_rules.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "workloads/layer.hpp"

namespace dnntune::cli {

namespace rules {
const NumberRule batch_per_process{1, static_cast<double>(workloads::max_batch)};
const NumberRule global_batch{1, 2147483647.0};
const NumberRule nodes{1, 1048576};
const NumberRule ranks_or_threads{1, 4096};
const NumberRule parameter_servers{0, 4096};
const NumberRule steps{1, 1e6};
const NumberRule warmup_steps{0, 1e6};
const NumberRule epochs{0, 1e6, true, false};
const NumberRule dataset_images{1, 1e12};
const NumberRule megabytes{0, 1048576, true, false};
const NumberRule learning_rate{0, 1e12, true, false};
const NumberRule calibration_budget{10, 1e7, false, false};
const NumberRule seconds{0, 1e7, true, false};
}  // namespace rules

namespace {

// 65536, 2147483647, 0.5, 1e+12: never 1.04858e+06 or 309 digits.
std::string readable(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

}  // namespace

std::string describe(const NumberRule& rule) {
  return (rule.integer ? "an integer from " : "a number from ") + readable(rule.lowest) +
         (rule.lowest_excluded ? " (excluded)" : "") + " to " + readable(rule.highest);
}

Expected<double> parse_checked(const std::string& text, const NumberRule& rule) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  const bool whole = !text.empty() && end == begin + text.size() && !std::isspace(static_cast<unsigned char>(text[0]));
  if (!whole || std::isnan(value)) return bad_input("Value " + text + " is not a number (" + describe(rule) + ")");
  const bool in_range =
      (rule.lowest_excluded ? value > rule.lowest : value >= rule.lowest) && value <= rule.highest;
  if (!in_range)
    return bad_input("Value " + text + " not in range " + readable(rule.lowest) +
                     (rule.lowest_excluded ? " (excluded)" : "") + " to " + readable(rule.highest));
  if (rule.integer && value != std::floor(value)) return bad_input("Value " + text + " is not an integer");
  return value;
}

Expected<std::vector<double>> parse_checked_list(const std::string& text, const NumberRule& rule,
                                                 const std::string& option) {
  std::vector<double> values;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    auto value = parse_checked(item, rule);
    if (!value) return bad_input(option + ": " + value.error().message);
    values.push_back(*value);
  }
  if (values.empty()) return bad_input(option + ": empty list");
  return values;
}

CLI::Validator checked(const NumberRule& rule) {
  return CLI::Validator(
      [rule](std::string& text) {
        const auto value = parse_checked(text, rule);
        return value ? std::string() : value.error().message;
      },
      describe(rule));
}

}  // namespace dnntune::cli
