// records/machine_report.hpp — the text view of a MachineProfile (its JSON view is
// to_json_text in machine_profile.hpp): topology, bindings and peaks, readable in a terminal.
#pragma once

#include <string>

#include "records/machine_profile.hpp"

namespace dnntune::records {

std::string machine_report_text(const MachineProfile& profile);

// "1.5 GiB", "48 KiB": binary units for memory and cache sizes.
std::string format_bytes(std::uint64_t bytes);

}  // namespace dnntune::records
