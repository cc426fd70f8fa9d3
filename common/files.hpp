// common/files.hpp — the one way dnntune writes an output file and the one guard before it reads
// an input file. Writes are atomic (a temporary in the same folder, written, fsync'ed, renamed
// over the target), so a full disk or a crash never leaves a truncated or empty output behind.
// Reads refuse what is not a regular file or is larger than max_input_bytes (e.g. /dev/zero).
#pragma once

#include <cstdint>
#include <string>

#include "common/expected.hpp"

namespace dnntune {

// The largest input file dnntune reads: 256 MiB (a calibration of every zoo network is ~2 MiB).
constexpr std::uint64_t max_input_bytes = std::uint64_t{256} << 20;

// `content` to `path`, atomically. A missing folder or a path that is a folder is bad input; a
// write that fails (disk full, I/O error) is a failure, with the reason from errno, and removes
// its temporary. A path that exists and is not a regular file (/dev/null, a FIFO) is written in
// place: there is nothing to rename over.
Expected<void> write_file_atomically(const std::string& path, const std::string& content);

// Why a write failed, from its errno; 0 (a short write that set none) is what a full disk does.
std::string write_error_reason(int error_number);

// bad_input when `path` cannot be an output file: its folder does not exist, or it is a folder.
// write_file_atomically checks it too; commands check it first, before any work.
Expected<void> check_output_file(const std::string& path);

// bad_input unless `path` is a regular file (or a link to one) of at most max_input_bytes.
Expected<void> check_input_file(const std::string& path);

// The text of a whole input file, after check_input_file.
Expected<std::string> read_input_file(const std::string& path);

}  // namespace dnntune
