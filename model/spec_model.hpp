// model/spec_model.hpp — the model of a spec machine, made the same way wherever it is asked for
// (the command, the Python module): the closest reference of the candidates
// (model/reference_choice), the spec priors for what it could not identify (model/spec_priors),
// and the lines that say what the answer rests on.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/predictor.hpp"
#include "model/reference_choice.hpp"

namespace dnntune::model {

struct SpecModel {
  Predictor predictor;
  // The same with the priors at their values, not drawn: the band of the identified parameters
  // alone, to tell how much of the band the unidentified ones cause.
  Predictor without_prior_spread;
  std::vector<std::string> basis;  // the reference and why, then each unidentified group with its source
};

Expected<SpecModel> make_spec_model(const records::MachineProfile& machine,
                                    const std::vector<ReferenceCandidate>& candidates, const std::string& backend);

}  // namespace dnntune::model
