// calibrate/line_channel.hpp — newline-terminated messages over file descriptors (a socket
// to a worker, or a worker's standard input and output), with a timeout on reads: how the calibration parent and its
// worker processes
// talk (one JSON object per line; see worker.hpp for the messages).
#pragma once

#include <optional>
#include <string>

namespace dnntune::calibrate {

class LineChannel {
 public:
  LineChannel() = default;
  // Takes ownership of both descriptors (closes them when destroyed).
  LineChannel(int read_fd, int write_fd) : read_fd_(read_fd), write_fd_(write_fd) {}
  LineChannel(LineChannel&& other) noexcept;
  LineChannel& operator=(LineChannel&& other) noexcept;
  LineChannel(const LineChannel&) = delete;
  LineChannel& operator=(const LineChannel&) = delete;
  ~LineChannel();

  // The next line without its newline, once one arrives within `timeout_seconds` (negative:
  // wait as long as it takes); nullopt on timeout, end of file or error (see closed()).
  std::optional<std::string> read_line(double timeout_seconds);
  // Whether a whole line is ready now, without blocking.
  bool line_ready();
  // Writes `line` and a newline; false when the other end is gone.
  bool write_line(const std::string& line);
  // The other end closed its side (or a read failed).
  bool closed() const { return closed_; }
  int read_fd() const { return read_fd_; }

 private:
  void close_all();
  // Reads what is available into buffer_ if the descriptor becomes readable in time.
  bool fill(double timeout_seconds);

  int read_fd_ = -1;
  int write_fd_ = -1;
  std::string buffer_;
  bool closed_ = false;
};

}  // namespace dnntune::calibrate
