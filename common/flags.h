// Command-line parsing for every orrery command: boost's default style, except that no prefix of
// a flag stands for it ('--comm-scal' is a typo, not '--comm-scale'), and a flag that is not one
// is named with the closest valid spelling.
//
//   po::store(ParseFlags(argc, argv, desc), vm);             // flags only
//   po::store(ParseFlags(argc, argv, desc, &positional), vm);
//
// An unknown flag throws UnknownFlag (a po::error): "unknown flag '--machne'; did you mean
// '--machine'?"; the suggestion is measured on the name without its '=value'. Without a
// positional description, a word that is no flag's value is a po::error naming it.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace orrery {

class UnknownFlag : public boost::program_options::error {
 public:
  UnknownFlag(const std::string& flag, const std::string& message)
      : boost::program_options::error(message), flag_(flag) {}
  const std::string& flag() const { return flag_; }

 private:
  std::string flag_;
};

inline std::vector<std::string> OptionNames(
    const boost::program_options::options_description& desc) {
  std::vector<std::string> names;
  for (const auto& o : desc.options()) names.push_back("--" + o->long_name());
  return names;
}

inline boost::program_options::parsed_options ParseFlags(
    int argc, const char* const argv[], const boost::program_options::options_description& desc,
    const boost::program_options::positional_options_description* positional = nullptr) {
  namespace po = boost::program_options;
  po::command_line_parser parser(argc, argv);
  parser.options(desc).style(po::command_line_style::default_style ^
                             po::command_line_style::allow_guessing);
  if (positional != nullptr) parser.positional(*positional);
  try {
    po::parsed_options parsed = parser.run();
    // A word that is no flag's value (boost keeps it as a positional token, which store drops):
    // '--replicate-trace false' would otherwise run with the switch on.
    const po::option* previous = nullptr;
    for (const po::option& o : parsed.options) {
      if (o.position_key >= 0 && o.string_key.empty()) {
        const std::string word = o.original_tokens.empty() ? "" : o.original_tokens[0];
        std::string message = "unexpected argument '" + word + "'";
        if (previous != nullptr) {
          const std::string flag = "--" + previous->string_key;
          const po::option_description* d = desc.find_nothrow(previous->string_key, false);
          if (d != nullptr && d->semantic()->max_tokens() == 0) {
            message += " after " + flag + ", a switch that takes no value (give it for on, " +
                       "leave it out for off)";
          } else {
            std::string given;
            for (const std::string& t : previous->original_tokens) given += " " + t;
            message += " after" + given + ": a flag takes one value (give the flag again " +
                       "for another, where it may be repeated)";
          }
        }
        throw po::error(message);
      }
      previous = &o;
    }
    return parsed;
  } catch (const po::unknown_option& e) {
    const std::string flag = e.get_option_name();
    std::string message = "unknown flag '" + flag + "'";
    const std::string guess = DidYouMean(flag.substr(0, flag.find('=')), OptionNames(desc));
    if (!guess.empty()) message += "; did you mean '" + guess + "'?";
    throw UnknownFlag(flag, message);
  }
}

}  // namespace orrery
