// common/files.hpp — the one way dnntune writes an output file and the one guard before it reads
// an input file. A regular file is replaced atomically (a temporary in the same folder, written,
// fsync'ed, renamed over the target, keeping the target's mode and owner), so a full disk or a
// crash never leaves a truncated or empty output behind. Reads refuse what is not a regular file
// or is larger than max_input_bytes (e.g. /dev/zero). Nothing here blocks on a FIFO: reads open
// without blocking and check what they opened; writes refuse a FIFO or socket that this process
// does not itself hold open for writing (its standard output in a pipe, /dev/fd/N).
#pragma once

#include <cstdint>
#include <string>

#include "common/expected.hpp"

namespace dnntune {

// The largest input file dnntune reads: 256 MiB (a calibration of every zoo network is ~2 MiB).
constexpr std::uint64_t max_input_bytes = std::uint64_t{256} << 20;

// Who a written file belongs to. A user's output (-o FILE) goes where the shell's `>` would send
// it: a file this process holds open for writing (-o /dev/stdout, /dev/stderr, /dev/fd/N: a pipe,
// a terminal, or the file behind `> FILE`) is written through that descriptor; a character device
// (/dev/null) is written in place; a symbolic link is followed, and the file at its end replaced
// (the link stays a link); a regular file is replaced. A file dnntune owns (in its cache, in a
// measurement folder) is always replaced by the rename, whatever stands at its path: a link is
// replaced, never written through, and a FIFO never blocks the run.
enum class WrittenFile { user_output, owned };

// `content` to `path` (atomically where it is a regular file). A missing folder or a path that is
// a folder, a block device, a FIFO or a socket (other than one this process holds open) is bad
// input; a write that fails (disk full, I/O error) is a failure, with the reason from errno, and
// removes its temporary.
Expected<void> write_file_atomically(const std::string& path, const std::string& content,
                                     WrittenFile kind = WrittenFile::user_output);

// Why a write failed, from its errno; 0 (a short write that set none) is what a full disk does.
std::string write_error_reason(int error_number);

// bad_input when `path` cannot be an output file: its folder does not exist, or it is a folder,
// a FIFO, a socket or a block device (a FIFO or socket this process holds open for writing, as its
// standard output in a pipe, is fine).
// write_file_atomically checks it too; commands check it first, before any work.
Expected<void> check_output_file(const std::string& path);

// bad_input unless `path` is a regular file (or a link to one) of at most max_input_bytes.
Expected<void> check_input_file(const std::string& path);

// The text of a whole input file: opened without blocking (a FIFO put in a file's place never
// hangs the reader), then checked as check_input_file on what was opened.
Expected<std::string> read_input_file(const std::string& path);

// The file a user's output written to `path` replaces: `path`, or where its chain of symbolic links
// ends (as `>` follows them). For checks of what an output would replace by its name.
std::string written_path(const std::string& path);

// Whether two paths name the same file: the same device and inode when both exist, else the same
// path once made absolute and weakly canonical (links and "..": resolved as far as they exist).
bool same_file(const std::string& first, const std::string& second);

// Whether `path` is `folder` or inside it (compared as same_file compares).
bool is_inside(const std::string& path, const std::string& folder);

}  // namespace dnntune
