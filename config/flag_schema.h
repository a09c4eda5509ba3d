// A command's flags declared once, the way configuration keys are (config/schema.h): name, help,
// default, unit and range or choices, bound to a field of a plain struct T. From the one
// declaration come the Boost.Program_options description (and so --help), the range checks with
// one clear message each, "did you mean" for a misspelt flag (common/flags.h's ParseFlags), the
// flag tables of docs/cli.md (FlagTableMarkdown) and the printed configuration (ToYaml).
//
//   struct Knobs { double scale = 1; bool strict = false; std::vector<double> queues; };
//   FlagSchema<Knobs> f;
//   f.Number("scale", &Knobs::scale).Greater(0).Max(1e6).Help("multiplies every size");
//   f.Switch("strict", &Knobs::strict).Help("missing dependencies are errors");
//   f.NumberList("queues", &Knobs::queues).Integral().Min(1).Help("one a dimension");
//   po::options_description desc = f.Description("knobs options");
//   ... po::store(ParseFlags(argc, argv, desc), vm);
//   Knobs k;
//   Status st = f.Apply(vm, &k);   // "--scale is '0'; expected a number > 0 and <= 1e6"
//
// A flag's value is read as one YAML scalar, a list flag's as a comma-separated list; a switch
// takes no value. A repeated list flag (Repeated) is given once per item instead
// ("--kineto a.json --kineto b.json", or as positional arguments), its items taken as given. Flags
// not given keep the struct's defaults (which the help and docs show).
#pragma once

#include <boost/program_options.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/key_doc.h"
#include "config/schema.h"

namespace orrery {

// One flag's Boost.Program_options entry (help text with unit, default and range). A switch
// takes no value; `implicit` (when not empty) is the value of a flag given bare.
void AddFlag(boost::program_options::options_description* desc, const KeySpec& k, bool is_switch,
             const std::string& implicit);
// A string-list flag given once per item (its items are not split at commas).
void AddRepeatedFlag(boost::program_options::options_description* desc, const KeySpec& k);
// Checks the text given for flag `k` (comma-separated for a list) and parses it.
Status ParseFlagValue(const KeySpec& k, const std::string& text, ConfigValue* out);
// Checks the items given for repeated flag `k`, one per occurrence.
Status ParseRepeatedFlag(const KeySpec& k, const std::vector<std::string>& items, ConfigValue* out);
// The value of flag `name` in `vm` as text, "" when it was not given.
std::string GivenText(const boost::program_options::variables_map& vm, const std::string& name);

template <typename T>
class FlagSchema : public Schema<T> {
 public:
  using Schema<T>::Apply;  // a file's keys (a printed configuration's 'flags' section)

  // A switch: on when given ("--strict"), takes no value.
  KeySpec& Switch(const std::string& name, bool T::*field) {
    switches_.insert(name);
    return this->Bool(name, field);
  }
  // Flag `name` given bare means `value` ("--rendezvous-protocol" = "true").
  void Implicit(const std::string& name, const std::string& value) { implicit_[name] = value; }
  bool IsSwitch(const std::string& name) const { return switches_.count(name) > 0; }
  // A string list given once per item: "--kineto a.json --kineto b.json" (or positionally).
  KeySpec& Repeated(const std::string& name, std::vector<std::string> T::*field) {
    repeated_.insert(name);
    return this->StringList(name, field);
  }
  bool IsRepeated(const std::string& name) const { return repeated_.count(name) > 0; }

  // The flags as the manual lists them (a switch as "switch", off unless given).
  std::vector<KeyDoc> Docs() const {
    std::vector<KeyDoc> docs = Schema<T>::Docs();
    for (KeyDoc& d : docs) {
      if (IsRepeated(d.name)) d.allowed = "repeat the flag, one value each";
      if (!IsSwitch(d.name)) continue;
      d.type = "switch";
      d.default_value = "off";
      d.allowed = "given or not";
    }
    return docs;
  }

  // Adds every flag to `desc` (in declaration order).
  void AddTo(boost::program_options::options_description* desc) const {
    for (const KeySpec& k : this->keys()) {
      if (IsRepeated(k.name)) {
        AddRepeatedFlag(desc, k);
        continue;
      }
      const auto it = implicit_.find(k.name);
      AddFlag(desc, k, IsSwitch(k.name), it == implicit_.end() ? "" : it->second);
    }
  }
  // Sets the fields of the flags given in `vm`; returns every problem ("--x is 'v'; expected
  // ..."). `given`, when not null, receives the names of the flags given.
  Status Apply(const boost::program_options::variables_map& vm, T* out,
               std::set<std::string>* given = nullptr) const {
    Status problems;
    for (size_t i = 0; i < this->keys().size(); ++i) {
      const KeySpec& k = this->keys()[i];
      if (vm.count(k.name) == 0 || vm[k.name].defaulted()) continue;
      ConfigValue v;
      const Status s = IsRepeated(k.name)
                           ? ParseRepeatedFlag(k, vm[k.name].as<std::vector<std::string>>(), &v)
                           : ParseFlagValue(k, GivenText(vm, k.name), &v);
      if (!s.ok()) {
        problems.Merge(s);
        continue;
      }
      this->Set(i, v, out);
      if (given != nullptr) given->insert(k.name);
    }
    return problems;
  }

 private:
  std::set<std::string> switches_;
  std::set<std::string> repeated_;
  std::map<std::string, std::string> implicit_;
};

}  // namespace orrery
