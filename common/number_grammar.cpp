// common/number_grammar.cpp — see number_grammar.hpp.
#include "common/number_grammar.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dnntune {
namespace {

// 65536, 2147483647, 0.5, 1e+12: never 1.04858e+06 or 309 digits.
std::string readable(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

bool is_digit(char character) { return character >= '0' && character <= '9'; }

// How many digits start `text` at `at`.
std::size_t digits_at(std::string_view text, std::size_t at) {
  std::size_t count = 0;
  while (at + count < text.size() && is_digit(text[at + count])) ++count;
  return count;
}

// Text from the user inside a message: at most 40 characters, control characters as '?', so
// that a refusal stays one short line.
std::string shown(std::string_view text) {
  std::string result;
  for (const char character : text.substr(0, 40))
    result += static_cast<unsigned char>(character) < 0x20 || character == 0x7f ? '?' : character;
  return text.size() > 40 ? result + "..." : result;
}

// "--nodes: " before a message about that option ("" when the caller's own prefix names it).
std::string prefix(const std::string& option) { return option.empty() ? "" : option + ": "; }

}  // namespace

std::optional<double> parse_number(std::string_view text) {
  std::size_t at = text.size() > 0 && text[0] == '-' ? 1 : 0;
  std::size_t count = digits_at(text, at);
  if (count == 0) return std::nullopt;
  at += count;
  if (at < text.size() && text[at] == '.') {
    count = digits_at(text, at + 1);
    if (count == 0) return std::nullopt;
    at += 1 + count;
  }
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
    count = digits_at(text, at);
    if (count == 0) return std::nullopt;
    at += count;
  }
  if (at != text.size()) return std::nullopt;
  // The text is plain decimal now: strtod reads all of it (overflow gives inf, refused by ranges).
  const std::string whole(text);
  return std::strtod(whole.c_str(), nullptr);
}

std::string describe(const NumberRule& rule) {
  return (rule.integer ? "an integer from " : "a number from ") + readable(rule.lowest) +
         (rule.lowest_excluded ? " (excluded)" : "") + " to " + readable(rule.highest);
}

Expected<double> check_number(double value, const NumberRule& rule, const std::string& text) {
  const std::string written = text.empty() ? readable(value) : shown(text);
  if (std::isnan(value)) return bad_input("Value " + written + " is not a number (" + describe(rule) + ")");
  const bool in_range = (rule.lowest_excluded ? value > rule.lowest : value >= rule.lowest) && value <= rule.highest;
  if (!in_range)
    return bad_input("Value " + written + " not in range " + readable(rule.lowest) +
                     (rule.lowest_excluded ? " (excluded)" : "") + " to " + readable(rule.highest));
  if (rule.integer && value != std::floor(value)) return bad_input("Value " + written + " is not an integer");
  return value;
}

Expected<double> parse_checked(const std::string& text, const NumberRule& rule) {
  const auto value = parse_number(text);
  if (!value) {
    // "inf" and "infinity" are no numbers of the grammar, but are refused as out of range, which
    // is what a user who typed them wants to hear.
    char* end = nullptr;
    const double spelled = std::strtod(text.c_str(), &end);
    if (!text.empty() && *end == '\0' && std::isinf(spelled) && std::isalpha(static_cast<unsigned char>(text.back())))
      return check_number(spelled, rule, text);
    return bad_input("Value " + shown(text) + " is not a number (" + describe(rule) + ")");
  }
  return check_number(*value, rule, text);
}

Expected<std::string> canonical_number(const std::string& text, const NumberRule& rule) {
  const auto value = parse_checked(text, rule);
  if (!value) return value.error();
  char written[40];
  if (rule.integer)
    std::snprintf(written, sizeof written, "%.0f", *value);
  else
    std::snprintf(written, sizeof written, "%.17g", *value);
  return std::string(written);
}

Expected<void> check_list_length(std::size_t count, const ListRule& rule, const std::string& option) {
  if (count == 0) return bad_input(option + ": empty list");
  if (count > rule.max_items)
    return bad_input(option + ": more than " + std::to_string(rule.max_items) + " values (at most " +
                     std::to_string(rule.max_items) + " after ranges are expanded)");
  return {};
}

Expected<std::vector<std::string>> split_list_items(const std::string& text, const std::string& option,
                                                    Repeats repeats) {
  if (text.empty()) return bad_input(prefix(option) + "an empty list (leave the option out for its default)");
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
      return bad_input(prefix(option) + "\"" + shown(text) +
                       "\" has an empty item (a list is items separated by single commas: a,b,c)");
    if (repeats == Repeats::refused && std::find(items.begin(), items.end(), item) != items.end())
      return bad_input(prefix(option) + "\"" + shown(item) + "\" is listed twice");
    items.push_back(std::move(item));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

Expected<std::vector<double>> parse_checked_list(const std::string& text, const ListRule& rule,
                                                 const std::string& option) {
  std::vector<double> values;
  const auto add = [&](double value) -> Expected<void> {
    values.push_back(value);
    if (values.size() > rule.max_items) return check_list_length(values.size(), rule, option);
    return {};
  };
  const auto items = split_list_items(text, option, Repeats::allowed);
  if (!items) return items.error();
  for (const std::string& item : *items) {
    const std::size_t dots = item.find("..");
    if (dots == std::string::npos) {
      const auto value = parse_checked(item, rule.value);
      if (!value) return bad_input(prefix(option) + value.error().message);
      if (auto added = add(*value); !added) return added.error();
    } else {
      const auto first = parse_checked(item.substr(0, dots), rule.value);
      if (!first) return bad_input(prefix(option) + first.error().message);
      const auto last = parse_checked(item.substr(dots + 2), rule.value);
      if (!last) return bad_input(prefix(option) + last.error().message);
      if (*first > *last) return bad_input(option + ": range " + shown(item) + " runs backwards");
      if (!(*first > 0)) return bad_input(option + ": range " + shown(item) + " must start above 0 (it doubles)");
      for (double value = *first; value < *last; value *= 2)
        if (auto added = add(value); !added) return added.error();
      if (auto added = add(*last); !added) return added.error();
    }
  }
  return values;
}

}  // namespace dnntune
