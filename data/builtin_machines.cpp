// data/builtin_machines.cpp — see builtin_machines.hpp.
#include "data/builtin_machines.hpp"

namespace dnntune::data {

std::vector<std::string> builtin_machine_names() {
  std::vector<std::string> names;
  for (const BuiltinText& text : builtin_machine_texts()) names.push_back(text.name);
  return names;
}

std::string builtin_gpu_machine_names() {
  std::string names;
  for (const BuiltinText& text : builtin_machine_texts()) {
    const auto profile = records::machine_profile_from_json_text(text.json, text.name);
    if (profile && profile->kind == records::MachineKind::gpu)
      names += (names.empty() ? "" : ", ") + std::string(text.name);
  }
  return names;
}

Expected<records::MachineProfile> builtin_machine(const std::string& name) {
  for (const BuiltinText& text : builtin_machine_texts())
    if (name == text.name) return records::machine_profile_from_json_text(text.json, "<built-in " + name + ">");
  std::string known;
  for (const auto& known_name : builtin_machine_names()) known += (known.empty() ? "" : ", ") + known_name;
  return bad_input("unknown machine \"" + name + "\" (known: " + known + ")");
}

bool is_gpu_reference_calibration(const BuiltinText& text) {
  return std::string(text.json).find("\"dnntune.gpu-calibration\"") != std::string::npos;
}

const char* builtin_reference_calibration(const std::string& backend) {
  for (const BuiltinText& text : builtin_reference_calibration_texts())
    if (backend == text.name) return text.json;
  return nullptr;
}

Expected<records::MachineProfile> load_machine(const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0);
  return is_path ? records::read_machine_profile(name_or_path) : builtin_machine(name_or_path);
}

}  // namespace dnntune::data
