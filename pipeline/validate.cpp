// pipeline/validate.cpp — see validate.hpp.
#include "pipeline/validate.hpp"

#include "probe/topology.hpp"
#include "records/measurement.hpp"

namespace dnntune::pipeline {

Expected<void> check_validation_request(const ValidationRequest& request) {
  if (request.resume && request.training.record_path.empty())
    return bad_input("--resume reads the runs back from the --record FILE an earlier validate wrote: give it");
  // Read whole before any training, and before a resume cuts a record cut short from its end.
  if (!request.training.record_path.empty())
    if (auto usable = records::check_record_file(request.training.record_path); !usable) return usable;
  return {};
}

Expected<std::vector<model::ValidationRow>> validate_here(const model::Predictor& predictor,
                                                          const ValidationRequest& request) {
  if (auto checked = check_validation_request(request); !checked) return checked.error();
  if (predictor.spec_only())
    return bad_input("validate compares with training on this machine: give this machine's calibration, not --machine");
  const auto here = probe::describe_this_machine();
  if (!here) return here.error();
  const std::string this_machine = records::fingerprint(*here);
  if (records::fingerprint(predictor.machine()) != this_machine)
    return bad_input("the calibration describes machine " + records::fingerprint(predictor.machine()) +
                     ", and validate trains on this one (" + this_machine +
                     "): calibrate and fit here, or leave out --calibration");
  RecordedTrainings recorded;
  if (request.resume) {
    // The run appends after what an interrupted one left.
    if (auto dropped = records::drop_unterminated_last_line(request.training.record_path); !dropped)
      return dropped.error();
    auto read = RecordedTrainings::read(request.training.record_path, this_machine);
    if (!read) return read.error();
    recorded = std::move(*read);
  }
  std::vector<model::ValidationRow> rows;
  const std::size_t total = request.networks.size() * request.configurations.size();
  for (std::size_t index = 0; index < request.networks.size(); ++index)
    for (const auto& configuration : request.configurations) {
      const std::string position = "[" + std::to_string(rows.size() + 1) + "/" + std::to_string(total) + "] " +
                                   request.models[index] + ", " + model::describe(configuration);
      auto run = recorded.find(request.networks[index].name, configuration, request.training);
      if (run) {
        if (request.progress) request.progress(position + ": read back from " + request.training.record_path);
      } else {
        if (request.progress) request.progress(position + ": training");
        auto trained = train_for_real(request.models[index], configuration, request.training);
        if (!trained) return trained.error();
        run = *trained;
      }
      auto prediction = predictor.predict(request.networks[index], configuration);
      if (!prediction) return prediction.error();
      model::ValidationRow row;
      row.network = request.networks[index].name;
      row.configuration = configuration;
      row.measured_images_per_second = run->images_per_second;
      row.measured_low = run->low;
      row.measured_high = run->high;
      row.prediction = std::move(*prediction);
      rows.push_back(std::move(row));
    }
  return rows;
}

}  // namespace dnntune::pipeline
