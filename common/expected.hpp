// common/expected.hpp — errors as values (llvm::Expected-style).
// Library code never prints or exits on bad input: it returns Expected<T>, and only the
// command line (cli/) turns an Error into a one-line message and an exit code.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace dnntune {

// What kind of failure, so the CLI can choose the exit code: bad_input (exit 2) is the
// user's to fix (a missing file, an unknown name, a malformed JSON); failure (exit 1) is
// something that went wrong while running (a kernel that crashed, a process that died).
enum class ErrorKind { bad_input, failure };

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::bad_input;
};

inline Error bad_input(std::string message) { return {std::move(message), ErrorKind::bad_input}; }
inline Error failure(std::string message) { return {std::move(message), ErrorKind::failure}; }

// Either a T or an Error. Check with `if (!result)` before dereferencing.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}
  Expected(Error error) : state_(std::move(error)) {}

  explicit operator bool() const { return std::holds_alternative<T>(state_); }
  T& operator*() { return std::get<T>(state_); }
  const T& operator*() const { return std::get<T>(state_); }
  T* operator->() { return &std::get<T>(state_); }
  const T* operator->() const { return &std::get<T>(state_); }
  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Expected<void>: success, or an Error.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), ok_(false) {}

  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace dnntune
