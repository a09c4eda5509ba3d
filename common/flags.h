// Command-line parsing for every orrery command: boost's default style, except that no prefix of
// a flag stands for it ('--comm-scal' is a typo, not '--comm-scale').
//
//   po::store(ParseFlags(argc, argv, desc), vm);             // flags only
//   po::store(ParseFlags(argc, argv, desc, &positional), vm);
#pragma once

#include <boost/program_options.hpp>

namespace orrery {

inline boost::program_options::parsed_options ParseFlags(
    int argc, const char* const argv[], const boost::program_options::options_description& desc,
    const boost::program_options::positional_options_description* positional = nullptr) {
  namespace po = boost::program_options;
  po::command_line_parser parser(argc, argv);
  parser.options(desc).style(po::command_line_style::default_style ^
                             po::command_line_style::allow_guessing);
  if (positional != nullptr) parser.positional(*positional);
  return parser.run();
}

}  // namespace orrery
