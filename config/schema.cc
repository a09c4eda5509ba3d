#include "config/schema.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/yaml_aliases.h"

namespace orrery {
namespace {

// A close candidate, trying a case-insensitive match before edit distance.
std::string Suggest(const std::string& word, const std::vector<std::string>& candidates) {
  for (const std::string& c : candidates) {
    if (Lower(c) == Lower(word)) return c;
  }
  return DidYouMean(word, candidates);
}

std::string SuggestionText(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string guess = Suggest(word, candidates);
  return guess.empty() ? "" : " (did you mean '" + guess + "'?)";
}

// How a bad value is shown in a message.
std::string Show(const YAML::Node& v) {
  switch (v.Type()) {
    case YAML::NodeType::Scalar:
      return "'" + v.Scalar() + "'";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "empty";
  }
}

std::string RangeText(const KeySpec& k) {
  std::string r;
  if (k.min.has_value() && k.max.has_value() && !k.min_exclusive) {
    return "in [" + FormatNumber(*k.min) + ", " + FormatNumber(*k.max) +
           (k.max_exclusive ? ")" : "]");
  }
  if (k.min.has_value()) r = (k.min_exclusive ? "> " : ">= ") + FormatNumber(*k.min);
  if (k.max.has_value()) {
    r += std::string(r.empty() ? "" : " and ") + (k.max_exclusive ? "< " : "<= ") +
         FormatNumber(*k.max);
  }
  return r;
}

std::string ScalarExpected(const KeySpec& k, bool plural) {
  std::string base;
  const bool number =
      k.type == ValueType::kInt || k.type == ValueType::kNumber || k.type == ValueType::kNumberList;
  if (number) {
    const bool integer = k.integer || k.type == ValueType::kInt;
    base = integer ? (plural ? "integers" : "an integer") : (plural ? "numbers" : "a number");
    const std::string range = RangeText(k);
    if (!range.empty()) base += " " + range;
  } else if (!k.allowed.empty()) {
    base = (plural ? "each one of " : "one of ") + JoinNames(k.allowed);
  } else {
    base = plural ? "strings" : "a string";
  }
  return base;
}

std::string Problem(const std::string& where, const std::string& what, const std::string& bad,
                    const std::string& expected) {
  return (where.empty() ? "" : where + ": ") + what + " is " + bad + "; expected " + expected;
}

// Whether a scalar is a string whatever it looks like: quoted ("10", '10') or tagged !!str.
bool WrittenAsString(const YAML::Node& v) {
  return v.Tag() == "!" || v.Tag() == "tag:yaml.org,2002:str";
}

constexpr const char* kNotANumber = "not a number";

// Parses a plain (unquoted, not !!str) scalar as a finite number. Returns "" when it is one;
// for a number a double cannot hold, how to show the bad value ("'1e-320', which is too close
// to 0 to hold (...)"); kNotANumber otherwise.
std::string ParseNumber(const YAML::Node& v, double* out) {
  if (!v.IsScalar() || WrittenAsString(v)) return kNotANumber;
  const std::string& s = v.Scalar();
  if (s.empty()) return kNotANumber;
  errno = 0;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return kNotANumber;
  if (errno == ERANGE) {
    // strtod says ERANGE for results past a double's range: infinite, or nonzero but below the
    // smallest normal magnitude (2.2e-308; a denormal or 0 comes back).
    if (std::isinf(d)) return "'" + s + "', which is too large to hold (above 1.8e308)";
    return "'" + s + "', which is too close to 0 to hold (nonzero magnitudes below 2.2e-308)";
  }
  if (!std::isfinite(d)) return kNotANumber;
  *out = d;
  return "";
}

// Where a value is in its file ("" for a flag's value).
std::string At(const ConfigFile* file, const YAML::Node& v) {
  return file == nullptr ? "" : file->Where(v);
}

// Whether a plain scalar is written in decimal digits ("-12", "+7", "007").
bool IsDigitsText(const YAML::Node& v) {
  if (!v.IsScalar() || WrittenAsString(v)) return false;
  const std::string& s = v.Scalar();
  const size_t first = s.empty() || (s[0] != '-' && s[0] != '+') ? 0 : 1;
  return first < s.size() && s.find_first_not_of("0123456789", first) == std::string::npos;
}

// The exact value of a scalar written in decimal digits; nullopt past 2^64 - 1 in magnitude.
std::optional<WholeNumber> ParseDigits(const std::string& s) {
  const size_t first = s[0] == '-' || s[0] == '+' ? 1 : 0;
  errno = 0;
  const unsigned long long m = std::strtoull(s.c_str() + first, nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return WholeNumber{s[0] == '-' && m != 0, static_cast<uint64_t>(m)};
}

constexpr double kTwoTo53 = 9007199254740992.0;  // every whole number below it is a double

// An integer field's value, exactly: as written when in digits; otherwise (1e3, 0x10, 1.0) from
// the double `d`, which holds every whole number only below 2^53 in magnitude.
std::string CheckWhole(const ConfigFile* file, const KeySpec& k, const YAML::Node& v,
                       const std::string& what, double d, WholeNumber* out) {
  const uint64_t most = k.type_bits >= 64 ? UINT64_MAX : (uint64_t{1} << k.type_bits) - 1;
  const std::string most_text = std::to_string(most);
  const std::string least_text = k.type_signed ? "-" + std::to_string(most + 1) : "0";
  auto refuse = [&](const std::string& why) {
    return Problem(At(file, v), what, Show(v), ScalarExpected(k, false) + why);
  };
  const std::string& text = v.Scalar();
  std::optional<WholeNumber> w;
  if (IsDigitsText(v)) {
    w = ParseDigits(text);
    if (!w.has_value()) {  // past 2^64 - 1: no field holds it
      return refuse(text[0] == '-' ? " (at least " + least_text + ")"
                                   : " (at most " + most_text + ")");
    }
  } else if (const size_t dot = text.find('.');
             text.find_first_of("eExX") == std::string::npos && dot != std::string::npos &&
             text.find_first_not_of('0', dot + 1) != std::string::npos) {
    return refuse("");  // a fraction the double rounded away (2251799813685248.9 reads as ...249)
  } else if (std::fabs(d) < kTwoTo53) {  // 2^53 itself may be 2^53 + 1 rounded
    w = WholeNumber{d < 0, static_cast<uint64_t>(std::fabs(d))};
  } else {
    return refuse(
        " (" +
        (k.type_signed ? "from " + least_text + " to " + most_text : "at most " + most_text) +
        "), written in digits from 2^53 (9007199254740992) on, to be exact");
  }
  if (!w->negative && w->magnitude > most) return refuse(" (at most " + most_text + ")");
  if (w->negative && (!k.type_signed || w->magnitude - 1 > most)) {
    return refuse(" (at least " + least_text + ")");
  }
  *out = *w;
  return "";
}

// Checks one number against the key's constraints; returns "" or a problem. An integer field's
// value is also set, exactly, in *whole.
std::string CheckNumber(const ConfigFile* file, const KeySpec& k, const YAML::Node& v,
                        const std::string& what, double* out, WholeNumber* whole = nullptr) {
  const bool integer = k.integer || k.type == ValueType::kInt;
  double d = 0;
  const std::string why = ParseNumber(v, &d);
  bool ok = why.empty();
  if (ok && integer && d != std::floor(d)) ok = false;
  if (ok && k.min.has_value() && (k.min_exclusive ? d <= *k.min : d < *k.min)) ok = false;
  if (ok && k.max.has_value() && (k.max_exclusive ? d >= *k.max : d > *k.max)) ok = false;
  if (ok && k.type_bits > 0) {
    WholeNumber w;
    const std::string p = CheckWhole(file, k, v, what, d, &w);
    if (!p.empty()) return p;
    if (whole != nullptr) *whole = w;
  }
  if (ok) {
    *out = d;
    return "";
  }
  std::string expected = ScalarExpected(k, false);
  if (!k.unit.empty()) expected += " (" + k.unit + ")";
  if (v.IsScalar() && v.Tag() == "!") expected += ", written without quotes";
  if (v.IsScalar() && v.Tag() == "tag:yaml.org,2002:str") expected += ", written without !!str";
  const bool unholdable = !why.empty() && why != kNotANumber;
  return Problem(At(file, v), what, unholdable ? why : Show(v), expected);
}

// Checks one string against the key's allowed values and extra check; returns "" or a problem.
std::string CheckString(const ConfigFile* file, const KeySpec& k, const YAML::Node& v,
                        const std::string& what, std::string* out) {
  std::string joined;
  if (k.list_as_text && v.IsSequence()) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].IsScalar()) {
        return Problem(At(file, v[i]), what + ", item " + std::to_string(i + 1) + ",", Show(v[i]),
                       "a single value");
      }
      joined += (i ? "," : "") + v[i].Scalar();
    }
  } else if (!v.IsScalar()) {
    return Problem(At(file, v), what, Show(v),
                   ScalarExpected(k, false) + (k.list_as_text ? " or a list" : ""));
  }
  const std::string& s = v.IsSequence() ? joined : v.Scalar();
  if (!k.allowed.empty()) {
    bool found = false;
    for (const std::string& a : k.allowed) found = found || a == s;
    if (!found) {
      return Problem(At(file, v), what, Show(v),
                     "one of " + JoinNames(k.allowed) + SuggestionText(s, k.allowed));
    }
  }
  if (k.check) {
    const std::string expected = k.check(s);
    if (!expected.empty()) return Problem(At(file, v), what, Show(v), expected);
  }
  *out = s;
  return "";
}

std::string LengthText(const KeySpec& k) {
  if (k.exact_length.has_value()) {
    return " with exactly " + std::to_string(*k.exact_length) +
           (*k.exact_length == 1 ? " entry" : " entries");
  }
  if (k.min_length.has_value() && *k.min_length > 0) {
    return " with at least " + std::to_string(*k.min_length) +
           (*k.min_length == 1 ? " entry" : " entries");
  }
  return "";
}

// `file` names where a bad value is (nullptr: a flag's value, named by `what` alone).
Status CheckValue(const ConfigFile* file, const KeySpec& k, const YAML::Node& v,
                  const std::string& what, ConfigValue* out) {
  Status problems;
  switch (k.type) {
    case ValueType::kInt:
    case ValueType::kNumber: {
      WholeNumber whole;
      const std::string p = CheckNumber(file, k, v, what, &out->number, &whole);
      if (!p.empty()) problems.Add(p);
      if (p.empty() && k.type_bits > 0) out->whole = whole;
      break;
    }
    case ValueType::kBool: {
      const std::string s = v.IsScalar() && !WrittenAsString(v) ? Lower(v.Scalar()) : "";
      if (s == "1" || s == "true") {
        out->boolean = true;
      } else if (s == "0" || s == "false") {
        out->boolean = false;
      } else {
        problems.Add(Problem(At(file, v), what, Show(v), "0, 1, true or false"));
      }
      break;
    }
    case ValueType::kString:
    case ValueType::kEnum: {
      const std::string p = CheckString(file, k, v, what, &out->text);
      if (!p.empty()) problems.Add(p);
      break;
    }
    case ValueType::kStringList:
    case ValueType::kNumberList: {
      const bool numbers = k.type == ValueType::kNumberList;
      const std::string expected = "a list of " + ScalarExpected(k, true) + LengthText(k) +
                                   " (e.g. [" + (numbers ? "1, 2" : "a, b") + "])";
      if (!v.IsSequence()) {
        problems.Add(Problem(At(file, v), what, Show(v), expected));
        break;
      }
      const size_t n = v.size();
      if ((k.exact_length.has_value() && n != *k.exact_length) ||
          (k.min_length.has_value() && n < *k.min_length)) {
        problems.Add(Problem(At(file, v), what,
                             "a list of " + std::to_string(n) + (n == 1 ? " entry" : " entries"),
                             expected));
      }
      for (size_t i = 0; i < n; ++i) {
        const YAML::Node e = v[i];
        const std::string item = what + ", item " + std::to_string(i + 1) + ",";
        std::string p;
        if (numbers) {
          double d = 0;
          p = CheckNumber(file, k, e, item, &d);
          if (p.empty()) out->numbers.push_back(d);
        } else {
          std::string s;
          p = CheckString(file, k, e, item, &s);
          if (p.empty()) out->strings.push_back(s);
        }
        if (!p.empty()) problems.Add(p);
      }
      break;
    }
  }
  return problems;
}

std::string TypeName(const KeySpec& k) {
  switch (k.type) {
    case ValueType::kInt:
      return "int";
    case ValueType::kNumber:
      return k.integer ? "int" : "number";
    case ValueType::kBool:
      return "bool (0/1/true/false)";
    case ValueType::kString:
      return k.list_as_text ? "string or list" : "string";
    case ValueType::kEnum:
      return "enum";
    case ValueType::kStringList:
      return k.allowed.empty() ? "list of strings" : "list of enums";
    case ValueType::kNumberList:
      return k.integer ? "list of ints" : "list of numbers";
  }
  return "?";
}

}  // namespace

Status CheckFlagValue(const KeySpec& k, const YAML::Node& v, const std::string& what,
                      ConfigValue* out) {
  return CheckValue(nullptr, k, v, what, out);
}

std::string FlowYaml(const YAML::Node& n) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

namespace {

void EmitKeepingQuotes(YAML::Emitter& e, const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar: {
      // Only where the quotes or the tag change what the text reads as: a number, a boolean or
      // null written as a string ("20", !!str true); a plain string is written as FlowYaml would.
      const bool quoted = n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str";
      bool other_type = false;
      if (quoted) {
        // A number as the config readers take one (ParseNumber: strtod, so 0x10 and inf too).
        const std::string& text = n.Scalar();
        char* end = nullptr;
        if (!text.empty()) {
          std::strtod(text.c_str(), &end);
          other_type = end != text.c_str() && *end == '\0';
        }
      }
      if (quoted && !other_type) {  // a boolean or null, as YAML reads it unquoted
        try {
          const YAML::Node plain = YAML::Load(n.Scalar());
          bool flag;
          other_type =
              plain.IsNull() || (plain.IsScalar() && YAML::convert<bool>::decode(plain, flag));
        } catch (const YAML::Exception&) {
        }
      }
      if (other_type && n.Tag() == "!") {
        e << YAML::DoubleQuoted << n.Scalar();
      } else if (other_type) {
        e << YAML::SecondaryTag("str") << n.Scalar();
      } else {
        e << n;
      }
      return;
    }
    case YAML::NodeType::Sequence:
      e << YAML::BeginSeq;
      for (const YAML::Node& item : n) EmitKeepingQuotes(e, item);
      e << YAML::EndSeq;
      return;
    case YAML::NodeType::Map:
      e << YAML::BeginMap;
      for (const auto& kv : n) {
        e << YAML::Key;
        EmitKeepingQuotes(e, kv.first);
        e << YAML::Value;
        EmitKeepingQuotes(e, kv.second);
      }
      e << YAML::EndMap;
      return;
    default:
      e << n;
  }
}

}  // namespace

std::string FlowYamlKeepingQuotes(const YAML::Node& n) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  EmitKeepingQuotes(e, n);
  return e.c_str();
}

std::string FormatNumber(double v) {
  std::ostringstream s;
  s.precision(15);
  s << v;
  return s.str();
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

namespace {

// The whole of a configuration file; errors name the path and why it cannot be read.
Status ReadConfigText(const std::string& path, std::string* out) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::Error(path + ": is a directory; expected a configuration file");
  }
  if (const std::string why = NotARegularFile(path); !why.empty()) return Status::Error(why);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Status::Error(path + ": cannot open the file (" +
                         (err ? std::string(std::strerror(err)) : "unknown error") + ")");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": cannot read the file");
  *out = text.str();
  return Status::Ok();
}

}  // namespace

StatusOr<YAML::Node> ParseYamlDocument(const std::string& text, const std::string& path) {
  if (Status aliases = CheckYamlAliases(text, path); !aliases.ok()) return aliases;
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    return Status::Error(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                         std::to_string(e.mark.column + 1) + ": not valid YAML/JSON: " + e.msg);
  } catch (const YAML::Exception& e) {
    return Status::Error(path + ": not valid YAML/JSON: " + e.what());
  }
  if (docs.empty()) return YAML::Node();
  for (size_t i = 1; i < docs.size(); ++i) {
    if (docs[i].IsNull() || !docs[i].IsDefined()) continue;
    const YAML::Mark m = docs[i].Mark();
    const std::string at = m.is_null() || m.line < 0 ? "" : ":" + std::to_string(m.line + 1);
    return Status::Error(path + at + ": a second YAML document (" + Show(docs[i]) +
                         ") starts here; expected one document per file (a second one, after "
                         "'---' or after the first one's closing bracket, would not be read)");
  }
  return docs[0];
}

StatusOr<YAML::Node> ReadYamlDocument(const std::string& path) {
  std::string text;
  const Status read = ReadConfigText(path, &text);
  if (!read.ok()) return read;
  return ParseYamlDocument(text, path);
}

bool IsMergeKey(const YAML::Node& key) {
  return key.IsScalar() && key.Scalar() == "<<" && !WrittenAsString(key);
}

std::string MergeKeyProblem(const std::string& where) {
  return where +
         ": '<<' is a YAML merge key, which is not supported; expected the keys written out "
         "in full";
}

StatusOr<ConfigFile> ConfigFile::Read(const std::string& path) {
  std::string text;
  const Status read = ReadConfigText(path, &text);
  if (!read.ok()) return read;
  return Parse(text, path);
}

StatusOr<ConfigFile> ConfigFile::Parse(const std::string& text, const std::string& path) {
  StatusOr<YAML::Node> root = ParseYamlDocument(text, path);
  if (!root.ok()) return root.status();
  return FromNode(*root, path);
}

StatusOr<ConfigFile> ConfigFile::FromNode(const YAML::Node& root, const std::string& path) {
  ConfigFile f;
  f.path_ = path;
  f.root_ = root;
  const char* expected = "; expected a map of 'key: value' pairs (a JSON object)";
  switch (f.root_.Type()) {
    case YAML::NodeType::Map:
      return f;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return Status::Error(path + ": the file is empty" + std::string(expected));
    case YAML::NodeType::Sequence:
      return Status::Error(f.Where(f.root_) + ": the top level is a list" + expected);
    case YAML::NodeType::Scalar:
      return Status::Error(f.Where(f.root_) + ": the top level is the single value '" +
                           f.root_.Scalar() + "'" + expected);
  }
  return f;
}

YAML::Node ConfigFile::Get(const std::string& key) const {
  for (auto it = root_.begin(); it != root_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool ConfigFile::Has(const std::string& key) const {
  for (auto it = root_.begin(); it != root_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return true;
  }
  return false;
}

namespace {

void AddDuplicateKeys(const YAML::Node& node, const std::string& path, Status* problems) {
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it->first.IsScalar() && !seen.insert(it->first.Scalar()).second) {
        const YAML::Mark m = it->first.Mark();
        problems->Add(path + (m.is_null() || m.line < 0 ? "" : ":" + std::to_string(m.line + 1)) +
                      ": key '" + it->first.Scalar() + "' appears more than once");
      }
      AddDuplicateKeys(it->second, path, problems);
    }
  } else if (node.IsSequence()) {
    for (const YAML::Node& item : node) AddDuplicateKeys(item, path, problems);
  }
}

}  // namespace

Status DuplicateKeys(const YAML::Node& node, const std::string& path) {
  Status problems;
  AddDuplicateKeys(node, path, &problems);
  return problems;
}

std::string ConfigFile::Place(const YAML::Node& node) const {
  if (!node.IsDefined()) return path_;
  const YAML::Mark m = node.Mark();
  if (m.is_null() || m.line < 0) return path_;
  return path_ + ":" + std::to_string(m.line + 1);
}

std::string ConfigFile::Where(const YAML::Node& node) const {
  return context_.empty() ? Place(node) : Place(node) + ": " + context_;
}

std::string ConfigFile::WhereKey(const std::string& key) const {
  for (auto it = root_.begin(); it != root_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return Where(it->first);
  }
  return Where(YAML::Node());
}

std::string KeySpec::Expected() const {
  switch (type) {
    case ValueType::kBool:
      return "0, 1, true or false";
    case ValueType::kStringList:
    case ValueType::kNumberList:
      return "a list of " + ScalarExpected(*this, true) + LengthText(*this);
    default:
      return ScalarExpected(*this, false) + (unit.empty() ? "" : " (" + unit + ")");
  }
}

KeyDoc KeySpec::Doc() const {
  KeyDoc d;
  d.name = name;
  d.type = TypeName(*this);
  d.unit = unit;
  d.default_value = default_text;
  d.meaning = help;
  d.astra_sim = astra_sim;
  if (!allowed_text.empty()) {
    d.allowed = allowed_text;
  } else if (!allowed.empty()) {
    d.allowed = JoinNames(allowed);
  } else if (type == ValueType::kBool) {
    d.allowed = "0, 1, true, false";
  } else {
    d.allowed = RangeText(*this);
  }
  if (exact_length.has_value()) {
    d.allowed += std::string(d.allowed.empty() ? "" : "; ") + "exactly " +
                 std::to_string(*exact_length) + (*exact_length == 1 ? " entry" : " entries");
  }
  return d;
}

Status CheckKeys(const ConfigFile& file, const std::vector<KeySpec>& keys,
                 std::vector<std::optional<ConfigValue>>* values) {
  values->assign(keys.size(), std::nullopt);
  std::vector<bool> seen(keys.size(), false);
  std::vector<std::string> names;
  for (const KeySpec& k : keys) names.push_back(k.name);
  Status problems;
  bool listed_valid_keys = false;
  const YAML::Node& root = file.root();
  for (auto it = root.begin(); it != root.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar()) {
      problems.Add(file.Where(key) + ": a key is " + Show(key) + "; expected a key name");
      continue;
    }
    if (IsMergeKey(key)) {
      problems.Add(MergeKeyProblem(file.Where(key)));
      continue;
    }
    const std::string& name = key.Scalar();
    size_t index = keys.size();
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i].name == name) index = i;
    }
    if (index == keys.size()) {
      if (problems.problems().size() >= kMaxProblemsPerFile) {
        // Past what the loaders list (Status::Capped): counted, so no suggestion is computed.
        problems.Add(file.Where(key) + ": unknown key '" + name + "'");
        continue;
      }
      const std::string guess = Suggest(name, names);
      // The valid keys are listed once per file, at the first unknown key with no suggestion.
      std::string hint = " (did you mean '" + guess + "'?)";
      if (guess.empty()) {
        hint = listed_valid_keys ? "; valid keys as listed above"
                                 : "; valid keys: " + JoinNames(names);
        listed_valid_keys = true;
      }
      problems.Add(file.Where(key) + ": unknown key '" + name + "'" + hint);
      continue;
    }
    if (seen[index]) {
      problems.Add(file.Where(key) + ": key '" + name + "' appears more than once");
      continue;
    }
    seen[index] = true;
    ConfigValue value;
    const Status s =
        CheckValue(&file, keys[index], it->second, "key '" + keys[index].name + "'", &value);
    if (s.ok()) {
      (*values)[index] = std::move(value);
    } else {
      problems.Merge(s);
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].required && !seen[i]) {
      problems.Add(file.Where(YAML::Node()) + ": required key '" + keys[i].name +
                   "' is missing; expected " + keys[i].Expected());
    }
  }
  return problems;
}

}  // namespace orrery
