// cli/number_rules.cpp — see number_rules.hpp.
#include "cli/number_rules.hpp"

namespace dnntune::cli {

CLI::Validator checked(const NumberRule& rule) {
  return CLI::Validator(
      [rule](std::string& text) {
        auto canonical = canonical_number(text, rule);
        if (!canonical) return canonical.error().message;
        text = *canonical;
        return std::string();
      },
      describe(rule));
}

CLI::Validator checked_list(const ListRule& rule) {
  return CLI::Validator(
      [rule](std::string& text) {
        // The option's name is CLI11's prefix of the message.
        const auto values = parse_checked_list(text, rule, "");
        return values ? std::string() : values.error().message;
      },
      "LIST");
}

}  // namespace dnntune::cli
