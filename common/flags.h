// Command-line parsing for every orrery command: boost's default style, except that no prefix of
// a flag stands for it ('--comm-scal' is a typo, not '--comm-scale'), and a flag that is not one
// is named with the closest valid spelling.
//
//   po::store(ParseFlags(argc, argv, desc), vm);             // flags only
//   po::store(ParseFlags(argc, argv, desc, &positional), vm);
//
// An unknown flag throws UnknownFlag (a po::error): "unknown flag '--machne'; did you mean
// '--machine'?"; the suggestion is measured on the name without its '=value'.
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
    return parser.run();
  } catch (const po::unknown_option& e) {
    const std::string flag = e.get_option_name();
    std::string message = "unknown flag '" + flag + "'";
    const std::string guess = DidYouMean(flag.substr(0, flag.find('=')), OptionNames(desc));
    if (!guess.empty()) message += "; did you mean '" + guess + "'?";
    throw UnknownFlag(flag, message);
  }
}

}  // namespace orrery
