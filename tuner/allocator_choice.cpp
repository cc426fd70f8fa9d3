// tuner/allocator_choice.cpp — see allocator_choice.hpp.
#include "tuner/allocator_choice.hpp"

#include <sstream>

#include "common/text_format.hpp"

namespace dnntune::tuner {
namespace {

// Gains to 3 significant figures: a noisy anchor can put a variant at 0.004x, which 2 decimals hide.
std::string gain_text(double gain) { return format_significant(gain, 3); }
std::string band_text(double low, double high) { return gain_text(low) + "-" + gain_text(high); }

std::string basis(const AllocatorCandidate& candidate) {
  return candidate.prediction.measured ? "measured" : "prior: not anchored under it";
}

std::string environment_text(const std::vector<std::pair<std::string, std::string>>& environment) {
  if (environment.empty()) return "nothing set";
  std::string text;
  for (const auto& [name, value] : environment) text += (text.empty() ? "" : " ") + name + "=" + value;
  return text;
}

}  // namespace

const AllocatorCandidate* AllocatorChoice::find(const std::string& name) const {
  for (const AllocatorCandidate& candidate : candidates)
    if (candidate.allocator.name == name) return &candidate;
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> AllocatorChoice::environment() const {
  const AllocatorCandidate* candidate = find(chosen);
  return candidate ? candidate->allocator.environment : std::vector<std::pair<std::string, std::string>>{};
}

AllocatorChoice choose_allocator(const std::optional<model::AllocationModel>& model, const workloads::Network& network,
                                 const model::Prediction& best, const std::vector<InstalledAllocator>& installed,
                                 const std::string& user_choice) {
  AllocatorChoice choice;
  choice.modelled = model.has_value();
  choice.fitted = model && model->variants.size() > 1;
  const auto& configuration = best.configuration;
  const double fresh_bytes = model::fresh_bytes_per_step(network, configuration.batch_per_process);
  bool others_installed = false;
  for (const InstalledAllocator& allocator : installed) {
    AllocatorCandidate candidate{
        allocator, {}, best.images_per_second, best.images_per_second_low, best.images_per_second_high};
    candidate.prediction.name = allocator.name;
    if (model) {
      candidate.prediction =
          model::predict_allocator(*model, allocator.name, best.iteration_seconds, fresh_bytes,
                                   configuration.threads_per_process, configuration.processes_per_node);
      candidate.images_per_second = best.images_per_second * candidate.prediction.gain;
      candidate.images_per_second_low = best.images_per_second_low * candidate.prediction.gain_low;
      candidate.images_per_second_high = best.images_per_second_high * candidate.prediction.gain_high;
    }
    if (allocator.name == "jemalloc" || allocator.name == "tcmalloc") others_installed = true;
    // The default first: the others are read against it.
    if (allocator.name == "default")
      choice.candidates.insert(choice.candidates.begin(), candidate);
    else
      choice.candidates.push_back(candidate);
  }

  // The model's pick: the largest median gain above 1 of a measured variant (a variant at its prior
  // is never recommended). Its band may reach below no gain: a first run times a variant for a step
  // or two, which leaves wide bands on a VM, and the faster median is still the better bet: keeping
  // glibc's defaults until a band lay wholly above 1 left measured gains on the table (docs/model.md,
  // "The allocator term"). The note says when the pick's band includes no gain.
  std::string pick = "default";
  double pick_gain = 1;
  const AllocatorCandidate* best_unmeasured = nullptr;
  for (const AllocatorCandidate& candidate : choice.candidates) {
    if (candidate.allocator.name == "default" || !model) continue;
    if (candidate.prediction.measured && candidate.prediction.gain > pick_gain) {
      pick = candidate.allocator.name;
      pick_gain = candidate.prediction.gain;
    } else if (!candidate.prediction.measured && candidate.prediction.gain > 1 &&
               (!best_unmeasured || candidate.prediction.gain > best_unmeasured->prediction.gain)) {
      best_unmeasured = &candidate;
    }
  }
  std::string note;
  // The variants within the pick's band: the measurements cannot order them, and the faster median
  // is still the better bet. The note names them (glibc-tuned needs no library on the nodes).
  if (const AllocatorCandidate* top = pick == "default" ? nullptr : choice.find(pick)) {
    std::string close;
    for (const AllocatorCandidate& candidate : choice.candidates)
      if (&candidate != top && candidate.allocator.name != "default" && candidate.prediction.measured &&
          candidate.prediction.gain > 1 && candidate.prediction.gain_high >= top->prediction.gain_low &&
          candidate.prediction.gain_low <= top->prediction.gain_high) {
        choice.close.push_back(candidate.allocator.name);
        close +=
            (close.empty() ? "" : ", ") + candidate.allocator.name + " (" + gain_text(candidate.prediction.gain) + "x)";
      }
    if (!close.empty())
      note = top->allocator.name + " (" + gain_text(top->prediction.gain) + "x) and " + close +
             " lie within each other's band: " + pick + ", the faster by the measurements, is recommended";
    if (top->prediction.gain_low <= 1)
      note += std::string(note.empty() ? "" : "; ") + pick + "'s band " +
              band_text(top->prediction.gain_low, top->prediction.gain_high) +
              " includes no gain, and its measured median is still the better bet than glibc's defaults";
  }
  if (!model) {
    note =
        "allocators are modelled only for a machine probed here, with its first-touch fault cost (a spec "
        "machine or another node's topology is not): glibc's defaults are kept";
  } else if (!choice.fitted) {
    note =
        "no anchor was trained under the allocator variants (calibrate --anchor does), so each is at its prior "
        "and glibc's defaults are kept";
  } else if (pick == "default" && best_unmeasured) {
    note = best_unmeasured->allocator.name + " is predicted " + gain_text(best_unmeasured->prediction.gain) +
           "x by its prior alone (no anchor under it here): glibc's defaults are kept";
  }
  if (!others_installed)
    note += std::string(note.empty() ? "" : "; ") +
            "neither jemalloc nor tcmalloc is installed here (Debian: libjemalloc2, libtcmalloc-minimal4): only "
            "glibc's variants were compared";
  if (!user_choice.empty()) {
    choice.chosen = user_choice;
    choice.chosen_by = "user";
    if (user_choice != pick && model)
      note += std::string(note.empty() ? "" : "; ") + "--allocator " + user_choice +
              " as asked; the model would pick " + pick;
  } else {
    choice.chosen = pick;
    choice.chosen_by = model ? "model" : "unmodelled";
  }
  choice.note = note;
  return choice;
}

std::string allocator_summary(const AllocatorChoice& choice) {
  std::ostringstream out;
  const AllocatorCandidate* chosen = choice.find(choice.chosen);
  out << choice.chosen << (choice.chosen_by == "user" ? " (--allocator)" : "");
  if (choice.chosen_by == "pytorch")
    out << " (timed faster by PyTorch from Python than the model's pick: see the note)";
  else if (chosen && choice.modelled && choice.chosen != "default")
    out << ", predicted " << gain_text(chosen->prediction.gain) << "x over glibc's defaults (90% band "
        << band_text(chosen->prediction.gain_low, chosen->prediction.gain_high) << ", " << basis(*chosen)
        << "): " << format_fixed(chosen->images_per_second, 1) << " images/s";
  else if (choice.chosen == "default")
    out << " (glibc's defaults" << (choice.modelled && choice.fitted ? ", no variant measured faster" : "") << ")";
  return out.str();
}

std::string allocator_text(const AllocatorChoice& choice) {
  std::ostringstream out;
  out << "  allocator: " << allocator_summary(choice) << "\n";
  if (!choice.note.empty()) out << "  allocator note: " << choice.note << "\n";
  return out.str();
}

std::string allocator_table_text(const AllocatorChoice& choice) {
  std::ostringstream out;
  if (choice.modelled) {
    out << "\nAllocators (the recommended configuration under each; gain over glibc's defaults, 90% band):\n";
    for (const AllocatorCandidate& candidate : choice.candidates)
      out << "  " << (candidate.allocator.name == choice.chosen ? "* " : "  ") << candidate.allocator.name << ": "
          << format_fixed(candidate.images_per_second, 1) << " images/s, " << gain_text(candidate.prediction.gain)
          << "x [" << band_text(candidate.prediction.gain_low, candidate.prediction.gain_high) << "], "
          << basis(candidate) << "; " << environment_text(candidate.allocator.environment) << "\n";
  }
  return out.str();
}

nlohmann::json allocator_json(const AllocatorChoice& choice) {
  nlohmann::json variants = nlohmann::json::array();
  for (const AllocatorCandidate& candidate : choice.candidates) {
    nlohmann::json environment = nlohmann::json::object();
    for (const auto& [name, value] : candidate.allocator.environment) environment[name] = value;
    nlohmann::json variant = {
        {"name", candidate.allocator.name},
        {"environment", environment},
        {"basis", choice.modelled ? (candidate.prediction.measured ? "measured" : "prior") : "unmodelled"}};
    if (choice.modelled) {
      variant["gain"] = candidate.prediction.gain;
      variant["gain_band"] = {candidate.prediction.gain_low, candidate.prediction.gain_high};
      variant["images_per_second"] = candidate.images_per_second;
      variant["images_per_second_band"] = {candidate.images_per_second_low, candidate.images_per_second_high};
      variant["iteration_seconds"] = candidate.prediction.iteration_seconds;
    }
    variants.push_back(variant);
  }
  nlohmann::json environment = nlohmann::json::object();
  for (const auto& [name, value] : choice.environment()) environment[name] = value;
  return {{"chosen", choice.chosen},
          {"chosen_by", choice.chosen_by},
          {"environment", environment},
          {"note", choice.note},
          {"variants", variants}};
}

}  // namespace dnntune::tuner
