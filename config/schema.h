// Declarative configuration schemas: every key is declared once, with its type, unit, default,
// meaning and constraints; one loader checks a whole file against it and reports every problem.
//
//   struct Knobs { int splits = 1; double delay_ns = 10; std::string policy = "LIFO"; };
//   Schema<Knobs> s;
//   s.Integer("splits", &Knobs::splits).Min(1).Help("chunks per collective");
//   s.Number("delay", &Knobs::delay_ns).Unit("ns").Min(0).Help("hand-off delay");
//   s.Enum("policy", &Knobs::policy, {"LIFO", "FIFO"}).Help("stream order");
//   StatusOr<ConfigFile> f = ConfigFile::Read("knobs.json");   // JSON is YAML
//   Knobs k;
//   Status st = f.ok() ? s.Apply(*f, &k) : f.status();
//   // st.problems(): "knobs.json:3: key 'splits' is '0'; expected an integer >= 1", ...
//
// Unknown keys are errors with a "did you mean"; numbers written in quotes (or tagged !!str),
// lists where a single value belongs (and the reverse) are type errors; each message names the
// file and line, the key, the bad value and what would be valid. A file holds one YAML document:
// a second one (after '---', or more text after the first map) is an error, as are YAML merge
// keys ('<<'). Schema::Docs() lists the keys for the manual.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"

namespace orrery {

// One parsed configuration file whose top level is a map ("key: value" pairs).
class ConfigFile {
 public:
  // Errors: the file cannot be opened, is not valid YAML/JSON (with line and column), is empty,
  // holds a second document (ReadYamlDocument), or its top level is not a map.
  static StatusOr<ConfigFile> Read(const std::string& path);
  // Same checks on text already in memory; `path` is only used in messages.
  static StatusOr<ConfigFile> Parse(const std::string& text, const std::string& path);
  // A map already parsed (a section of a larger document, e.g. a printed configuration's
  // 'system:'); messages give `path` and the lines of the document it came from.
  static StatusOr<ConfigFile> FromNode(const YAML::Node& root, const std::string& path);

  // Names what the map is inside its file (e.g. "protocol LL" for an entry of a larger map):
  // Where and WhereKey, and so every message a Schema gives on it, say it after the place.
  void SetContext(std::string what) { context_ = std::move(what); }

  const std::string& path() const { return path_; }
  const YAML::Node& root() const { return root_; }
  // The value of a top-level key (an invalid/undefined node when absent).
  YAML::Node Get(const std::string& key) const;
  bool Has(const std::string& key) const;
  // "path:line" for a node (just "path" when yaml-cpp has no position for it), then
  // ": <context>" when SetContext gave one.
  std::string Where(const YAML::Node& node) const;
  // "path:line" of a top-level key (just "path" when absent), then the context as Where.
  std::string WhereKey(const std::string& key) const;

 private:
  std::string Place(const YAML::Node& node) const;  // Where without the context

  std::string path_;
  std::string context_;
  YAML::Node root_;
};

enum class ValueType { kInt, kNumber, kBool, kString, kEnum, kStringList, kNumberList };

// The declaration of one key. Built with the chainable setters right after Schema::<Type>().
struct KeySpec {
  std::string name;
  ValueType type = ValueType::kNumber;
  std::string unit;
  std::string default_text;
  std::string help;
  std::string astra_sim;  // how ASTRA-sim 2.0 treats the key differently ("" = the same)
  bool required = false;
  bool integer = false;       // numbers (and list elements) must be whole
  std::optional<double> min;  // inclusive unless min_exclusive
  bool min_exclusive = false;
  std::optional<double> max;  // inclusive unless max_exclusive
  bool max_exclusive = false;
  // The integer field's width, not documented: a value fits in [-2^type_bits, 2^type_bits - 1]
  // when type_signed, else [0, 2^type_bits - 1]; 0 for a key bound to no integer field.
  int type_bits = 0;
  bool type_signed = false;
  std::vector<std::string> allowed;  // enum values / allowed list elements
  std::optional<size_t> min_length;  // lists
  std::optional<size_t> exact_length;
  // Extra check for each string element (lists) or the string itself: returns "" when valid,
  // otherwise what would be valid (e.g. "a collective algorithm (did you mean 'ring'?): ...").
  std::function<std::string(const std::string&)> check;
  std::string allowed_text;  // overrides the generated "allowed" column of the docs
  // A string key that also takes a list of plain values, read as their comma-separated text
  // ([0, 1, 2] reads as "0,1,2"; [] as ""), e.g. a jobs file's 'npus'.
  bool list_as_text = false;

  KeySpec& Unit(std::string u) {
    unit = std::move(u);
    return *this;
  }
  KeySpec& Help(std::string h) {
    help = std::move(h);
    return *this;
  }
  KeySpec& AstraSim(std::string a) {
    astra_sim = std::move(a);
    return *this;
  }
  KeySpec& Default(std::string d) {
    default_text = std::move(d);
    return *this;
  }
  KeySpec& Required() {
    required = true;
    default_text = "required";
    return *this;
  }
  KeySpec& Integral() {
    integer = true;
    return *this;
  }
  KeySpec& Min(double v) {
    min = v;
    min_exclusive = false;
    return *this;
  }
  KeySpec& Greater(double v) {
    min = v;
    min_exclusive = true;
    return *this;
  }
  KeySpec& Max(double v) {
    max = v;
    max_exclusive = false;
    return *this;
  }
  KeySpec& Below(double v) {
    max = v;
    max_exclusive = true;
    return *this;
  }
  KeySpec& Allowed(std::vector<std::string> values) {
    allowed = std::move(values);
    return *this;
  }
  KeySpec& MinLength(size_t n) {
    min_length = n;
    return *this;
  }
  KeySpec& ExactLength(size_t n) {
    exact_length = n;
    return *this;
  }
  KeySpec& Check(std::function<std::string(const std::string&)> f) {
    check = std::move(f);
    return *this;
  }
  KeySpec& AllowedText(std::string t) {
    allowed_text = std::move(t);
    return *this;
  }
  KeySpec& ListAsText() {
    list_as_text = true;
    return *this;
  }

  // "an integer >= 1", "one of LIFO, FIFO", "a list of numbers > 0", ...
  std::string Expected() const;
  KeyDoc Doc() const;
};

// A whole number exactly, whatever its size (a double holds every one only up to 2^53).
struct WholeNumber {
  bool negative = false;
  uint64_t magnitude = 0;
};

// A value that passed its key's checks.
struct ConfigValue {
  double number = 0;                 // kInt, kNumber
  std::optional<WholeNumber> whole;  // an integer field's value, exactly
  bool boolean = false;              // kBool
  std::string text;                  // kString, kEnum
  std::vector<std::string> strings;  // kStringList
  std::vector<double> numbers;       // kNumberList
};

// Checks every top-level key of `file` against `keys`. values[i] is set for each key present
// and valid. Returns all problems: unknown (with a suggestion) or repeated keys, wrong types,
// values out of range, required keys missing.
Status CheckKeys(const ConfigFile& file, const std::vector<KeySpec>& keys,
                 std::vector<std::optional<ConfigValue>>* values);

// Checks one value (a flag's, parsed as YAML text) against its declaration; problems read
// "<what> is 'x'; expected ..." (e.g. what = "--comm-scale").
Status CheckFlagValue(const KeySpec& k, const YAML::Node& v, const std::string& what,
                      ConfigValue* out);

// Shortest text for a number: 10 -> "10", 936.25 -> "936.25".
std::string FormatNumber(double v);
// `n` as one line of flow YAML ({a: 1, b: [2, 3]}), which is also how a generated config file
// is written.
std::string FlowYaml(const YAML::Node& n);
// The same, keeping how a scalar was written where that changes what it reads as: a number,
// boolean or null written quoted stays quoted ("20"), written !!str keeps its tag, so that the
// file it is written into refuses them as the original would.
std::string FlowYamlKeepingQuotes(const YAML::Node& n);
// "a, b, c".
std::string JoinNames(const std::vector<std::string>& names);

// A schema binding keys to the fields of a plain struct T (which must be default-constructible:
// its default member values are the documented defaults).
template <typename T>
class Schema {
 public:
  template <typename I>
  KeySpec& Integer(const std::string& name, I T::*field) {
    static_assert(std::is_integral<I>::value, "Integer() binds integer fields");
    KeySpec& k = Add(
        name, ValueType::kInt, std::to_string(defaults_.*field),
        [field](const ConfigValue& v, T* t) {
          // CheckValue sets `whole` for every integer field, and only to a value that fits the
          // field: a magnitude of at most 2^63 when negative.
          const uint64_t m = v.whole->magnitude;
          t->*field = v.whole->negative ? static_cast<I>(-static_cast<int64_t>(m - 1) - 1)
                                        : static_cast<I>(m);
        },
        [field](const T& t) { return YAML::Node(std::to_string(t.*field)); });
    k.integer = true;
    k.type_bits = std::numeric_limits<I>::digits;
    k.type_signed = std::is_signed<I>::value;
    if (!k.type_signed) k.min = 0;
    return k;
  }
  KeySpec& Number(const std::string& name, double T::*field) {
    return Add(
        name, ValueType::kNumber, FormatNumber(defaults_.*field),
        [field](const ConfigValue& v, T* t) { t->*field = v.number; },
        [field](const T& t) { return YAML::Node(FormatNumber(t.*field)); });
  }
  // Left empty when the key is absent.
  KeySpec& OptionalNumber(const std::string& name, std::optional<double> T::*field) {
    return Add(
        name, ValueType::kNumber, "absent",
        [field](const ConfigValue& v, T* t) { t->*field = v.number; },
        [field](const T& t) {
          return (t.*field).has_value() ? YAML::Node(FormatNumber(*(t.*field))) : YAML::Node();
        });
  }
  // 0, 1, true or false.
  KeySpec& Bool(const std::string& name, bool T::*field) {
    return Add(
        name, ValueType::kBool, (defaults_.*field) ? "1" : "0",
        [field](const ConfigValue& v, T* t) { t->*field = v.boolean; },
        [field](const T& t) { return YAML::Node((t.*field) ? "true" : "false"); });
  }
  KeySpec& String(const std::string& name, std::string T::*field) {
    const std::string& d = defaults_.*field;
    return Add(
        name, ValueType::kString, d.empty() ? "none" : d,
        [field](const ConfigValue& v, T* t) { t->*field = v.text; },
        [field](const T& t) { return TextNode(t.*field); });
  }
  KeySpec& Enum(const std::string& name, std::string T::*field, std::vector<std::string> values) {
    KeySpec& k = Add(
        name, ValueType::kEnum, defaults_.*field,
        [field](const ConfigValue& v, T* t) { t->*field = v.text; },
        [field](const T& t) { return TextNode(t.*field); });
    k.allowed = std::move(values);
    return k;
  }
  // An enum stored as a C++ enum: `values` maps each spelling to its enumerator.
  template <typename E>
  KeySpec& Enum(const std::string& name, E T::*field,
                std::vector<std::pair<std::string, E>> values) {
    std::string default_name;
    std::vector<std::string> names;
    for (const auto& [spelling, e] : values) {
      names.push_back(spelling);
      if (e == defaults_.*field) default_name = spelling;
    }
    KeySpec& k = Add(
        name, ValueType::kEnum, default_name,
        [field, values](const ConfigValue& v, T* t) {
          for (const auto& [spelling, e] : values) {
            if (spelling == v.text) t->*field = e;
          }
        },
        [field, values](const T& t) {
          for (const auto& [spelling, e] : values) {
            if (e == t.*field) return YAML::Node(spelling);
          }
          return YAML::Node();
        });
    k.allowed = std::move(names);
    return k;
  }
  KeySpec& StringList(const std::string& name, std::vector<std::string> T::*field) {
    return Add(
        name, ValueType::kStringList, "none",
        [field](const ConfigValue& v, T* t) { t->*field = v.strings; },
        [field](const T& t) { return ListNode(t.*field, [](const std::string& x) { return x; }); });
  }
  KeySpec& NumberList(const std::string& name, std::vector<double> T::*field) {
    return Add(
        name, ValueType::kNumberList, "none",
        [field](const ConfigValue& v, T* t) { t->*field = v.numbers; },
        [field](const T& t) { return ListNode(t.*field, FormatNumber); });
  }

  // Sets the fields of *out from the keys present in `file` (absent keys keep their values).
  // Returns every problem found; on error *out holds only the valid keys. `valid_keys`, when
  // given, receives the names of the keys that were present and valid (for checks across keys).
  Status Apply(const ConfigFile& file, T* out, std::set<std::string>* valid_keys = nullptr) const {
    std::vector<std::optional<ConfigValue>> values;
    Status status = CheckKeys(file, keys_, &values);
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (!values[i].has_value()) continue;
      setters_[i](*values[i], out);
      if (valid_keys != nullptr) valid_keys->insert(keys_[i].name);
    }
    return status;
  }

  // Every key's value in `t` as a YAML map, in declaration order; a key whose value is empty
  // (an absent optional number, an empty string or list) is left out, as it would be absent.
  YAML::Node ToYaml(const T& t) const {
    YAML::Node map(YAML::NodeType::Map);
    for (size_t i = 0; i < keys_.size(); ++i) {
      const YAML::Node v = getters_[i](t);
      if (v.IsDefined() && !v.IsNull()) map[keys_[i].name] = v;
    }
    return map;
  }
  // A file's effective configuration: the keys `file` gives, as written, and every other key
  // that `fill(name)` keeps, with its value in `t` (the struct `file` was applied to, so its
  // default), in declaration order; a key whose value in `t` is empty is left out, as in ToYaml.
  YAML::Node WithDefaults(const ConfigFile& file, const T& t,
                          const std::function<bool(const std::string&)>& fill) const {
    YAML::Node map(YAML::NodeType::Map);
    for (size_t i = 0; i < keys_.size(); ++i) {
      const std::string& name = keys_[i].name;
      if (file.Has(name)) {
        map[name] = YAML::Clone(file.Get(name));
        continue;
      }
      if (!fill(name)) continue;
      const YAML::Node v = getters_[i](t);
      if (v.IsDefined() && !v.IsNull()) map[name] = v;
    }
    return map;
  }
  // Sets the field of key `index` (an index into keys()) from a checked value.
  void Set(size_t index, const ConfigValue& v, T* t) const { setters_[index](v, t); }

  const std::vector<KeySpec>& keys() const { return keys_; }
  std::vector<KeyDoc> Docs() const {
    std::vector<KeyDoc> docs;
    for (const KeySpec& k : keys_) docs.push_back(k.Doc());
    return docs;
  }

 private:
  static YAML::Node TextNode(const std::string& s) {
    return s.empty() ? YAML::Node() : YAML::Node(s);
  }
  template <typename E, typename F>
  static YAML::Node ListNode(const std::vector<E>& list, F text) {
    if (list.empty()) return YAML::Node();
    YAML::Node seq(YAML::NodeType::Sequence);
    for (const E& e : list) seq.push_back(text(e));
    return seq;
  }

  KeySpec& Add(const std::string& name, ValueType type, std::string default_text,
               std::function<void(const ConfigValue&, T*)> setter,
               std::function<YAML::Node(const T&)> getter) {
    for (const KeySpec& k : keys_) {
      ORRERY_CHECK(k.name != name, "key '" + name + "' declared twice");
    }
    keys_.emplace_back();
    keys_.back().name = name;
    keys_.back().type = type;
    keys_.back().default_text = std::move(default_text);
    setters_.push_back(std::move(setter));
    getters_.push_back(std::move(getter));
    return keys_.back();
  }

  T defaults_{};
  std::vector<KeySpec> keys_;
  std::vector<std::function<void(const ConfigValue&, T*)>> setters_;
  std::vector<std::function<YAML::Node(const T&)>> getters_;
};

// The one YAML document in `text` (YAML::Load alone keeps the first and silently drops the
// rest). Errors, each naming `path`: not valid YAML/JSON (with line and column), or a second
// document that is not empty (after '---', or more text after the first map or list), with the
// line where it starts. An empty document after the first ("a: 1\n---\n") holds nothing and
// is accepted.
StatusOr<YAML::Node> ParseYamlDocument(const std::string& text, const std::string& path);
// The same for a file; errors also: the file cannot be opened or is not a regular file.
StatusOr<YAML::Node> ReadYamlDocument(const std::string& path);

// A YAML merge key ('<<: *anchor', unquoted), which yaml-cpp keeps as a plain key named '<<'.
bool IsMergeKey(const YAML::Node& key);
// "<where>: '<<' is a YAML merge key, which is not supported; ..." for a loader's messages.
std::string MergeKeyProblem(const std::string& where);

// Keys given twice in any map inside `node` (yaml-cpp keeps both and a lookup sees only one):
// one "path:line: key 'k' appears more than once" problem each; Ok when there are none. For
// files read without ConfigFile's key tables (jobs files, sweep specs).
Status DuplicateKeys(const YAML::Node& node, const std::string& path);

}  // namespace orrery
