// common/self_executable.cpp — see self_executable.hpp.
#include "common/self_executable.hpp"

#include <filesystem>
#include <system_error>

namespace dnntune {

Expected<std::string> self_executable_path() {
  std::error_code error;
  std::string path = std::filesystem::read_symlink("/proc/self/exe", error).string();
  if (error || path.empty())
    return failure("cannot find this program's path (/proc/self/exe): " +
                   (error ? error.message() : std::string("the link is empty")));
  return path;
}

}  // namespace dnntune
