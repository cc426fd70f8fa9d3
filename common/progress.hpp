// common/progress.hpp — the one way the command and the Python module print progress: one line on
// standard error, "dnntune: LINE" or, for a command's own steps, "dnntune calibrate: LINE", made
// printable (a name or path from a file never reaches the terminal raw) and flushed at once (the
// lines tell a user what a long run is doing while it does it).
#pragma once

#include <functional>
#include <iostream>
#include <string>

#include "common/text_format.hpp"

namespace dnntune {

// A progress callback printing "dnntune COMMAND: LINE" (`command` "": "dnntune: LINE").
inline std::function<void(const std::string&)> progress_printer(const std::string& command) {
  const std::string prefix = "dnntune" + (command.empty() ? "" : " " + command) + ": ";
  return [prefix](const std::string& line) { std::cerr << prefix << printable(line) << std::endl; };
}

// "dnntune: LINE": the progress of the answers (a first run's calibration, a long search).
inline void print_progress(const std::string& line) { progress_printer("")(line); }

}  // namespace dnntune
