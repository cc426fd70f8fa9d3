// frontend/model_source.hpp — where a model comes from, one policy for the command and the
// Python module: a calibration file (this machine's, or the reference for a spec machine), a
// spec machine with the closest reference calibration's efficiencies and spec priors, another
// node's topology with a calibration of its CPU, a SLURM partition's calibrated node, or this
// machine's cached default calibration (made on first use; pipeline/default_calibration.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "frontend/option_rows.hpp"
#include "model/predictor.hpp"
#include "model/reference_choice.hpp"
#include "pipeline/default_calibration.hpp"
#include "records/measurement.hpp"

namespace dnntune::frontend {

// The request's source, as the user gave it ("" : not given). cli/ fills it from --calibration,
// --machine, --topology, --backend, --calibration-budget and --partition; python/ from Model()'s
// arguments.
struct ModelSource {
  std::string calibration_path;
  std::string machine;                    // a built-in spec name or a profile JSON
  std::string topology_path;              // an hwloc XML of another node (with calibration_path)
  std::string backend = "torch";          // the framework the user trains with
  double calibration_budget_seconds = 0;  // the whole first run's seconds; 0: the default (225 s)
  std::string partition;                  // answer from that SLURM partition's calibration, when there is one
};

// A machine given by name must name one: an empty name is refused (exit 2 in the command,
// ValueError in Python), never read as "this machine". `option` names the flag in the message.
Expected<void> check_machine_name(const std::string& machine,
                                  const std::string& option = long_name(option_rows::machine));

// The model and what it rests on, for the answers that say so (recommend). A spec machine's
// model carries a reference calibration's efficiencies with spec priors for what that reference
// could not identify (model/spec_priors.hpp); the reference is the closest of the built-in ones
// and the user's (reference_directory()). With `partition` and no other source: the calibration
// `calibrate --slurm` made of a node of it, when there is one (else this machine's, and the basis
// says so).
struct LoadedModel {
  model::Predictor predictor;
  std::vector<std::string> basis;  // one line each
  // A spec answer: the same model with the priors at their values, not drawn, so that the band
  // of the identified parameters alone can be told from the whole band.
  std::optional<model::Predictor> without_prior_spread;
  bool measured_here = false;   // this machine's own calibration: --verify can settle a tie
  bool from_partition = false;  // the calibration `calibrate --slurm` made of another node
  // This machine's recorded jobs (frontend/job_list.hpp), read once per request with the model: the
  // fabric fit, the allocator's competing setups and the contradicting jobs all read these.
  std::vector<records::Measurement> jobs;
};

// calibration_path: that machine. machine with calibration_path: the spec machine with the
// file's efficiencies (the file is the reference). topology_path with calibration_path: that
// node's topology with the calibrated machine's peaks and efficiencies. machine alone: the
// closest reference. Nothing: this machine's cached default calibration for `when_uncalibrated`
// (`progress` hears the first run, and a note when nothing could be measured, unless the
// request has its own callback). topology_path with machine is refused: a spec machine already
// is a node's layout.
Expected<LoadedModel> load_model(const ModelSource& source,
                                 const pipeline::DefaultCalibrationRequest& when_uncalibrated,
                                 const pipeline::Progress& progress);
Expected<model::Predictor> load_predictor(const ModelSource& source,
                                          const pipeline::DefaultCalibrationRequest& when_uncalibrated,
                                          const pipeline::Progress& progress);

// Where users' reference calibrations are read from: $DNNTUNE_REFERENCE_DIR, else
// CACHE/references (`dnntune fit -o` files).
std::string reference_directory();

// Every reference calibration of `backend` this dnntune knows: the built-in ones, then the
// user's; a user's file that cannot be read is an error that names it, never skipped.
Expected<std::vector<model::ReferenceCandidate>> reference_candidates(const std::string& backend);

// `machine` from the closest reference (or `given`), with spec priors for what it could not
// identify; the basis names all of it (model/spec_model.hpp).
Expected<LoadedModel> spec_model(const records::MachineProfile& machine, const std::string& backend,
                                 std::optional<model::ReferenceCandidate> given);

}  // namespace dnntune::frontend
