#include "config/flag_schema.h"

namespace orrery {

namespace po = boost::program_options;

namespace {

// "multiplies every size (a number > 0 and <= 1e6; default 1)".
std::string FlagHelp(const KeySpec& k, bool is_switch) {
  if (is_switch) return k.help;
  std::string extra = k.type == ValueType::kBool ? "0, 1, true or false" : k.Expected();
  if (k.type == ValueType::kStringList || k.type == ValueType::kNumberList) {
    extra += ", comma-separated";
  }
  if (k.type == ValueType::kString && k.allowed.empty()) {
    // A free or checked string: what its check admits, when the declaration says it ("auto,
    // none or a time in us"), not "a string".
    extra = k.check && !k.allowed_text.empty()
                ? k.allowed_text + (k.unit.empty() ? "" : " (" + k.unit + ")")
                : "";
  }
  if (!k.default_text.empty() && k.default_text != "none" && k.default_text != "absent") {
    extra += std::string(extra.empty() ? "" : "; ") + "default " + k.default_text;
  }
  return extra.empty() ? k.help : k.help + " (" + extra + ")";
}

}  // namespace

void AddFlag(po::options_description* desc, const KeySpec& k, bool is_switch,
             const std::string& implicit) {
  const std::string help = FlagHelp(k, is_switch);
  if (is_switch) {
    desc->add_options()(k.name.c_str(),
                        po::value<std::string>()->zero_tokens()->implicit_value("true", ""),
                        help.c_str());
  } else if (!implicit.empty()) {
    desc->add_options()(k.name.c_str(), po::value<std::string>()->implicit_value(implicit),
                        help.c_str());
  } else {
    desc->add_options()(k.name.c_str(), po::value<std::string>(), help.c_str());
  }
}

void AddRepeatedFlag(po::options_description* desc, const KeySpec& k) {
  const std::string help = k.help + " (repeat the flag, one value each)";
  desc->add_options()(k.name.c_str(), po::value<std::vector<std::string>>(), help.c_str());
}

Status ParseRepeatedFlag(const KeySpec& k, const std::vector<std::string>& items,
                         ConfigValue* out) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (const std::string& item : items) list.push_back(YAML::Node(item));
  return CheckFlagValue(k, list, "--" + k.name, out);
}

Status ParseFlagValue(const KeySpec& k, const std::string& text, ConfigValue* out) {
  const std::string what = "--" + k.name;
  if (k.type == ValueType::kStringList || k.type == ValueType::kNumberList) {
    YAML::Node list(YAML::NodeType::Sequence);
    for (size_t begin = 0;;) {
      const size_t comma = text.find(',', begin);
      list.push_back(YAML::Node(text.substr(begin, comma - begin)));
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    if (CheckFlagValue(k, list, what, out).ok()) return Status::Ok();
    std::string expected = k.Expected();  // "a list of integers in [1, 1024]"
    if (expected.rfind("a list of ", 0) == 0) expected = "a comma-separated " + expected.substr(2);
    return Status::Error(what + " is '" + text + "'; expected " + expected);
  }
  return CheckFlagValue(k, YAML::Node(text), what, out);
}

std::string GivenText(const po::variables_map& vm, const std::string& name) {
  if (vm.count(name) == 0) return "";
  return vm[name].as<std::string>();
}

}  // namespace orrery
