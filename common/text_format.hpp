// common/text_format.hpp — number formatting shared by the text views of every module.
#pragma once

#include <cstdio>
#include <string>

namespace dnntune {

// `value` with `decimals` digits after the point: format_fixed(3.14159, 2) == "3.14".
inline std::string format_fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace dnntune
