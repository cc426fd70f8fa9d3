// model/reference_choice.hpp — which reference calibration a spec machine's answer carries its
// efficiencies from, when there are several (the built-in ones of data/reference_calibrations,
// and users' own): the closest to the target by CPU vendor, widest vector ISA and SMT, and the
// answer says which and why.
#pragma once

#include <string>
#include <vector>

#include "model/calibration.hpp"
#include "records/machine_profile.hpp"

namespace dnntune::model {

struct ReferenceCandidate {
  std::string name;  // "built-in torch", or the file it was read from
  Calibration calibration;
};

struct ReferenceChoice {
  std::size_t index = 0;  // into the candidates
  std::string why;        // "same vendor (Intel), same vector ISA (avx512), no SMT unlike this machine"
};

// "intel", "amd", or "" when the CPU model names neither.
std::string cpu_vendor(const records::MachineProfile& profile);
// "avx512", "avx2", "avx" or "" — the widest FMA-capable vector ISA the profile lists.
std::string vector_isa(const records::MachineProfile& profile);

// The closest candidate of `backend` (vendor counts most, then ISA, then SMT; ties go to the
// reference that measured more cores, then to the first). Fails when none is of `backend`.
Expected<ReferenceChoice> choose_reference(const std::vector<ReferenceCandidate>& candidates,
                                           const records::MachineProfile& target, const std::string& backend);

}  // namespace dnntune::model
