// common/text_format.hpp — number and text formatting shared by the text and SVG views of every module.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace dnntune {

// `value` with `decimals` digits after the point: format_fixed(3.14159, 2) == "3.14".
inline std::string format_fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// `part` as a whole percent of `whole`: format_percent(1, 3) == "33%"; "-" when `whole` is 0.
inline std::string format_percent(double part, double whole) {
  return whole > 0 ? format_fixed(100 * part / whole, 0) + "%" : "-";
}

// `value` to `digits` significant figures, without an exponent for everyday magnitudes:
// format_significant(1234.5, 3) == "1230", format_significant(0.012345, 2) == "0.012".
inline std::string format_significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return format_fixed(value, 0);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const double scale = std::pow(10.0, magnitude - digits + 1);
  return format_fixed(std::round(value / scale) * scale, std::max(0, digits - 1 - magnitude));
}

// Text from input (a name, a path, a value) as it may be shown on a terminal: every control
// character (ESC, newline, ...) written as \xHH, so that it cannot move the cursor, recolour
// the terminal or start a line of its own. Every message that quotes input goes through it.
inline std::string printable(const std::string& text) {
  std::string shown;
  for (const char character : text) {
    const auto byte = static_cast<unsigned char>(character);
    if (byte >= 0x20 && byte != 0x7f) {
      shown += character;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      shown += escaped;
    }
  }
  return shown;
}

// `text` safe inside XML/SVG character data and attribute values.
inline std::string xml_escaped(const std::string& text) {
  std::string escaped;
  for (const char character : text) {
    switch (character) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&apos;";
        break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0 at all.
        if (static_cast<unsigned char>(character) >= 0x20 || character == '\t' || character == '\n')
          escaped += character;
    }
  }
  return escaped;
}

}  // namespace dnntune
