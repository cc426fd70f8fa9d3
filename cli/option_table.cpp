// cli/option_table.cpp — see option_table.hpp: the CLI11 glue over frontend/option_rows.cpp's rows.
#include "cli/option_table.hpp"

#include <cstdio>

namespace dnntune::cli {

namespace {

CLI::Option* hidden_unless_described(CLI::Option* option, const OptionRow& row) {
  if (row.help.empty()) option->group("");
  return option;
}

template <class T>
CLI::Option* add_number_or_text(CLI::App& command, const OptionRow& row, T& target) {
  CLI::Option* option = command.add_option(row.names, target, row.help);
  if (*row.value_text) option->option_text(row.value_text);
  if (row.number) option->transform(checked(*row.number));
  return hidden_unless_described(option, row);
}

// A list option: every value given (the option may be repeated) joined into one list and read
// by `read` (which throws CLI11's ValidationError for a bad list).
template <class T, class Read>
CLI::Option* add_joined_list(CLI::App& command, const OptionRow& row, std::vector<T>& target, Read read,
                             const std::string& shown_default) {
  CLI::Option* option = command.add_option(
      row.names,
      [&target, read](const CLI::results_t& values) {
        std::string joined;
        for (const std::string& value : values) joined += (joined.empty() ? "" : ",") + value;
        target = read(joined);
        return true;
      },
      row.help + row.list_help + "; or repeat it");
  option->type_size(1)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  option->option_text(*row.value_text ? row.value_text : "LIST");
  option->default_str(shown_default);
  return hidden_unless_described(option, row);
}

template <class T>
CLI::Option* add_number_list(CLI::App& command, const OptionRow& row, std::vector<T>& target) {
  std::string shown_default;
  for (const T value : target) shown_default += (shown_default.empty() ? "" : ",") + std::to_string(value);
  return add_joined_list(
      command, row, target,
      [&row](const std::string& joined) {
        const auto listed = list_values(row, joined);
        if (!listed) throw CLI::ValidationError(listed.error().message);
        return std::vector<T>(listed->begin(), listed->end());
      },
      shown_default);
}

}  // namespace

CLI::Option* add_value(CLI::App& command, const OptionRow& row, int& target) {
  return add_number_or_text(command, row, target);
}
CLI::Option* add_value(CLI::App& command, const OptionRow& row, std::int64_t& target) {
  return add_number_or_text(command, row, target);
}
CLI::Option* add_value(CLI::App& command, const OptionRow& row, std::uint64_t& target) {
  return add_number_or_text(command, row, target);
}
CLI::Option* add_value(CLI::App& command, const OptionRow& row, double& target) {
  return add_number_or_text(command, row, target);
}
CLI::Option* add_value(CLI::App& command, const OptionRow& row, float& target) {
  return add_number_or_text(command, row, target);
}
CLI::Option* add_value(CLI::App& command, const OptionRow& row, std::string& target) {
  CLI::Option* option = add_number_or_text(command, row, target);
  if (!row.number) option->check(given_text());
  return option;
}

CLI::Option* add_list(CLI::App& command, const OptionRow& row, std::string& target) {
  CLI::Option* option = command.add_option(row.names, target, row.help + row.list_help);
  option->option_text(*row.value_text ? row.value_text : "LIST");
  // An empty list is no list: refused here, not read as "not given" by the command.
  if (!row.number) option->check(given_text());
  return option;
}

CLI::Option* add_list(CLI::App& command, const OptionRow& row, std::vector<std::int64_t>& target) {
  return add_number_list(command, row, target);
}

CLI::Option* add_list(CLI::App& command, const OptionRow& row, std::vector<int>& target) {
  return add_number_list(command, row, target);
}

CLI::Option* add_list(CLI::App& command, const OptionRow& row, std::vector<std::string>& target) {
  std::string shown_default;
  for (const std::string& value : target) shown_default += (shown_default.empty() ? "" : ",") + value;
  CLI::Option* option = add_joined_list(
      command, row, target,
      [&row](const std::string& joined) {
        auto names = list_names(row, joined);
        if (!names) throw CLI::ValidationError(names.error().message);
        return std::move(*names);
      },
      shown_default);
  option->check(printable_text());
  return option;
}

CLI::Option* add_flag(CLI::App& command, const OptionRow& row, bool& target) {
  return hidden_unless_described(command.add_flag(row.names, target, row.help), row);
}

CLI::Option* add_flag(CLI::App& command, const OptionRow& row, std::function<void()> given) {
  return hidden_unless_described(command.add_flag_callback(row.names, std::move(given), row.help), row);
}

Expected<std::vector<double>> list_values(const OptionRow& row, const std::string& text) {
  const ListRule rule = row.list ? *row.list : ListRule{row.number ? *row.number : NumberRule{}, 1};
  return parse_checked_list(text, rule, long_name(row));
}

Expected<std::vector<std::string>> list_names(const OptionRow& row, const std::string& text) {
  auto names = split_list_items(text, long_name(row), Repeats::refused);
  if (!names) return names.error();
  if (row.list)
    if (auto length = check_list_length(names->size(), *row.list, long_name(row)); !length) return length.error();
  return names;
}

CLI::Validator given_text() {
  return CLI::Validator(
      [](std::string& text) {
        if (text.empty()) return std::string("an empty value (leave the option out for its default)");
        return printable_text()(text);
      },
      "");
}

CLI::Validator printable_text() {
  return CLI::Validator(
      [](std::string& text) {
        for (const char character : text)
          if (static_cast<unsigned char>(character) < 0x20 || character == 0x7f)
            return std::string("holds a control character (a newline, ESC, ...)");
        return std::string();
      },
      "");
}

}  // namespace dnntune::cli
