// common/shell_words.hpp — writing commands as lines a POSIX shell reads back word for word:
// the launch lines `train --launch` runs and prints, and those in job scripts and answers.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace dnntune {

// The word as is when it holds only characters no shell treats specially, else in single
// quotes (a quote inside becomes '\''); the empty word is ''.
inline std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-+=:,./@%") == std::string::npos)
    return word;
  std::string quoted = "'";
  for (const char character : word) quoted += character == '\'' ? std::string("'\\''") : std::string(1, character);
  return quoted + "'";
}

// The words quoted and joined by spaces.
// A number as a command-line argument, in the shortest form that reads back the same value.
inline std::string number_argument(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

inline std::string shell_command_line(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) line += (line.empty() ? "" : " ") + shell_quote(word);
  return line;
}

}  // namespace dnntune
