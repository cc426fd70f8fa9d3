// common/self_executable.hpp — the path of the running dnntune binary, for the commands that
// start copies of themselves (calibration workers, training ranks): one lookup, one message.
#pragma once

#include <string>

#include "common/expected.hpp"

namespace dnntune {

// The absolute path /proc/self/exe links to; a failure naming the reason when it cannot be read.
Expected<std::string> self_executable_path();

}  // namespace dnntune
