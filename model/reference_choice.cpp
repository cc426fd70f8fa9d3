// model/reference_choice.cpp — see reference_choice.hpp.
#include "model/reference_choice.hpp"

#include <algorithm>
#include <cctype>

namespace dnntune::model {

std::string cpu_vendor(const records::MachineProfile& profile) {
  std::string model = profile.cpu.model;
  std::transform(model.begin(), model.end(), model.begin(), [](unsigned char c) { return std::tolower(c); });
  if (model.find("intel") != std::string::npos || model.find("xeon") != std::string::npos) return "intel";
  if (model.find("amd") != std::string::npos || model.find("epyc") != std::string::npos) return "amd";
  return "";
}

std::string vector_isa(const records::MachineProfile& profile) {
  const auto has = [&](const char* name) {
    return std::find(profile.cpu.isa.begin(), profile.cpu.isa.end(), name) != profile.cpu.isa.end();
  };
  if (has("avx512f")) return "avx512";
  if (has("avx2")) return "avx2";
  if (has("avx")) return "avx";
  return "";
}

Expected<ReferenceChoice> choose_reference(const std::vector<ReferenceCandidate>& candidates,
                                           const records::MachineProfile& target, const std::string& backend) {
  const std::string vendor = cpu_vendor(target), isa = vector_isa(target);
  const bool smt = target.topology.pus_per_core > 1;
  int best_score = -1;
  ReferenceChoice choice;
  for (std::size_t index = 0; index < candidates.size(); ++index) {
    const Calibration& reference = candidates[index].calibration;
    if (reference.backend != backend) continue;
    const std::string their_vendor = cpu_vendor(reference.machine), their_isa = vector_isa(reference.machine);
    const bool their_smt = reference.machine.topology.pus_per_core > 1;
    const bool same_vendor = !vendor.empty() && vendor == their_vendor;
    const bool same_isa = !isa.empty() && isa == their_isa;
    // Vendor, then ISA, then SMT, then the cores the reference measured (more threads seen).
    const int score = 8 * same_vendor + 4 * same_isa + 2 * (smt == their_smt);
    const int cores = reference.machine.topology.cores;
    const bool better = score > best_score ||
                        (score == best_score && cores > candidates[choice.index].calibration.machine.topology.cores);
    if (!better) continue;
    best_score = score;
    choice.index = index;
    choice.why =
        std::string(same_vendor ? "same vendor (" + vendor + ")"
                                : "another vendor (" + (their_vendor.empty() ? "unknown" : their_vendor) + ")") +
        ", " + (same_isa ? "same vector ISA (" + isa + ")" : "another vector ISA (" + their_isa + ")") + ", " +
        (smt == their_smt ? (smt ? "SMT like this machine" : "no SMT like this machine")
                          : (their_smt ? "SMT unlike this machine" : "no SMT unlike this machine")) +
        ", " + std::to_string(cores) + " cores measured";
  }
  if (best_score < 0) return bad_input("no " + backend + " reference calibration: give --calibration FILE");
  return choice;
}

}  // namespace dnntune::model
