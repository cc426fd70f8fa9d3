// model/spec_model.cpp — see spec_model.hpp.
#include "model/spec_model.hpp"

#include "common/text_format.hpp"
#include "model/spec_priors.hpp"
#include "model/stragglers.hpp"

namespace dnntune::model {
namespace {

std::string describe_reference_machine(const records::MachineProfile& machine) {
  return machine.name + " (" + (machine.cpu.model.empty() ? "CPU unknown" : machine.cpu.model) + ", " +
         std::to_string(machine.topology.cores) + " cores, " + (machine.topology.pus_per_core > 1 ? "SMT" : "no SMT") +
         ")";
}

}  // namespace

Expected<SpecModel> make_spec_model(const records::MachineProfile& machine,
                                    const std::vector<ReferenceCandidate>& candidates, const std::string& backend) {
  auto choice = choose_reference(candidates, machine, backend);
  if (!choice) return choice.error();
  const ReferenceCandidate& reference = candidates[choice->index];
  const SpecPriors priors = apply_spec_priors(reference.calibration, machine);
  auto predictor = Predictor::from_spec(machine, priors.calibration);
  if (!predictor) return predictor.error();
  auto without = Predictor::from_spec(machine, priors.calibration_without_prior_spread);
  if (!without) return without.error();
  SpecModel spec{std::move(*predictor), std::move(*without), {}};
  spec.basis.push_back("reference calibration: " + reference.name + ", fitted on " +
                       describe_reference_machine(reference.calibration.machine) +
                       (candidates.size() > 1 ? "; the closest of " + std::to_string(candidates.size()) + ": " : ": ") +
                       choice->why);
  for (const auto& applied : priors.applied) {
    std::string names;
    for (const auto& name : applied.parameters) {
      const auto dot = name.rfind('.' + applied.field);
      names += (names.empty() ? "" : ", ") + (dot == std::string::npos || dot == 0 ? name : name.substr(0, dot));
    }
    const bool global = applied.parameters.size() == 1 && applied.parameters.front() == applied.field;
    spec.basis.push_back("not identified by the reference: " + applied.field + (global ? "" : " of " + names) + " (" +
                         applied.why_unidentified + "): prior " + format_significant(applied.value, 3) + ", range " +
                         format_significant(applied.low, 3) + " to " + format_significant(applied.high, 3) +
                         "; source: " + applied.source);
  }
  if (priors.applied.empty()) spec.basis.push_back("every parameter the answer uses was identified by the reference");
  spec.basis.push_back("step spread (a synchronous step over N nodes waits for the slowest): " +
                       spec_node_step_spread().source);
  return spec;
}

}  // namespace dnntune::model
