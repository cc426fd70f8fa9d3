// calibrate/line_channel.cpp — see line_channel.hpp.
#include "calibrate/line_channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>

#include "probe/timing.hpp"

namespace dnntune::calibrate {

LineChannel::LineChannel(LineChannel&& other) noexcept { *this = std::move(other); }

LineChannel& LineChannel::operator=(LineChannel&& other) noexcept {
  if (this == &other) return *this;
  close_all();
  read_fd_ = other.read_fd_, write_fd_ = other.write_fd_;
  buffer_ = std::move(other.buffer_);
  closed_ = other.closed_;
  other.read_fd_ = other.write_fd_ = -1;
  return *this;
}

LineChannel::~LineChannel() { close_all(); }

void LineChannel::close_all() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0 && write_fd_ != read_fd_) ::close(write_fd_);
  read_fd_ = write_fd_ = -1;
}

bool LineChannel::fill(double timeout_seconds) {
  if (closed_ || read_fd_ < 0) return false;
  pollfd descriptor{read_fd_, POLLIN, 0};
  const int timeout_ms = timeout_seconds < 0 ? -1 : static_cast<int>(std::ceil(timeout_seconds * 1000));
  const int ready = ::poll(&descriptor, 1, timeout_ms);
  if (ready < 0 && errno != EINTR) closed_ = true;
  if (ready <= 0) return false;
  char chunk[4096];
  const ssize_t count = ::read(read_fd_, chunk, sizeof chunk);
  if (count < 0 && errno == EINTR) return false;
  if (count <= 0) {
    closed_ = true;
    return false;
  }
  buffer_.append(chunk, static_cast<std::size_t>(count));
  return true;
}

std::optional<std::string> LineChannel::read_line(double timeout_seconds) {
  const double deadline = probe::now_seconds() + timeout_seconds;
  for (;;) {
    const std::size_t end = buffer_.find('\n');
    if (end != std::string::npos) {
      std::string line = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      return line;
    }
    if (closed_) return std::nullopt;
    double left = -1;
    if (timeout_seconds >= 0) {
      left = deadline - probe::now_seconds();
      if (left <= 0) return std::nullopt;
    }
    fill(left);
  }
}

bool LineChannel::line_ready() {
  while (buffer_.find('\n') == std::string::npos)
    if (!fill(0)) return false;
  return true;
}

bool LineChannel::write_line(const std::string& line) {
  const std::string message = line + "\n";
  std::size_t written = 0;
  while (written < message.size()) {
    // send() with MSG_NOSIGNAL on sockets: a closed peer is an error, not a SIGPIPE.
    ssize_t count = ::send(write_fd_, message.data() + written, message.size() - written, MSG_NOSIGNAL);
    if (count < 0 && errno == ENOTSOCK) count = ::write(write_fd_, message.data() + written, message.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return false;
    written += static_cast<std::size_t>(count);
  }
  return true;
}

}  // namespace dnntune::calibrate
