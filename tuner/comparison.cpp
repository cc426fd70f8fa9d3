// tuner/comparison.cpp — see comparison.hpp.
#include "tuner/comparison.hpp"

#include <sstream>

#include "common/text_format.hpp"
#include "model/plausibility.hpp"

namespace dnntune::tuner {

Ratio ratio_to_first(const Comparison& comparison, std::size_t index) {
  const ComparedMachine& first = comparison.machines.front();
  const ComparedMachine& other = comparison.machines.at(index);
  if (other.machine == first.machine && other.kind == first.kind && other.configuration == first.configuration)
    return {1, 1, 1, true};
  return {other.images_per_second / first.images_per_second, other.low / first.high, other.high / first.low};
}

namespace {

// "2.35x faster than skylake-8180" / "3.32x slower than ..." with the band in the same sense.
std::string ratio_words(const Ratio& ratio, const std::string& first) {
  if (ratio.same_machine) return "the same machine as " + first + " (one prediction: no ratio to draw)";
  if (ratio.value >= 1)
    return format_fixed(ratio.value, 2) + "x faster than " + first + " (band " + format_fixed(ratio.low, 2) + " - " +
           format_fixed(ratio.high, 2) + "x)";
  return format_fixed(1 / ratio.value, 2) + "x slower than " + first + " (band " + format_fixed(1 / ratio.high, 2) +
         " - " + format_fixed(1 / ratio.low, 2) + "x slower)";
}

}  // namespace

std::string comparison_text(const Comparison& comparison) {
  std::ostringstream out;
  out << comparison.network << ", fp32, each machine at its best configuration:\n";
  for (std::size_t index = 0; index < comparison.machines.size(); ++index) {
    const ComparedMachine& m = comparison.machines[index];
    out << "  " << m.machine << " (" << m.kind << "): " << m.configuration << "\n";
    // A band wider than the gate's ratio (model/plausibility.hpp) is no figure, and no ratio either.
    const bool known = model::band_is_known(m.low, m.high);
    out << "    images/s " << (known ? format_significant(m.images_per_second, 3) : std::string("unknown"))
        << " (90% band " << format_significant(m.low, 3) << " - " << format_significant(m.high, 3) << ")";
    const ComparedMachine& first = comparison.machines.front();
    if (index > 0 && known && model::band_is_known(first.low, first.high))
      out << ", " << ratio_words(ratio_to_first(comparison, index), first.machine);
    else if (index > 0)
      out << ", no ratio to " << first.machine << ": a band is wider than " << format_fixed(model::widest_band_ratio, 0)
          << "x";
    out << "\n    efficiencies: " << m.source << "\n";
  }
  return out.str();
}

nlohmann::json comparison_json(const Comparison& comparison) {
  nlohmann::json machines = nlohmann::json::array();
  for (std::size_t index = 0; index < comparison.machines.size(); ++index) {
    const ComparedMachine& m = comparison.machines[index];
    const Ratio ratio = ratio_to_first(comparison, index);
    machines.push_back(
        {{"machine", m.machine},
         {"kind", m.kind},
         {"configuration", m.configuration},
         {"images_per_second",
          model::band_is_known(m.low, m.high) ? nlohmann::json(m.images_per_second) : nlohmann::json(nullptr)},
         {"band", {{"low", m.low}, {"high", m.high}, {"level", 0.9}, {"known", model::band_is_known(m.low, m.high)}}},
         {"ratio_to_first",
          {{"value", ratio.value}, {"low", ratio.low}, {"high", ratio.high}, {"same_machine", ratio.same_machine}}},
         {"efficiencies", m.source}});
  }
  return {
      {"schema", "dnntune.comparison"}, {"schema_version", 1}, {"network", comparison.network}, {"machines", machines}};
}

}  // namespace dnntune::tuner
