// What the manual says about one configuration key (configs/README.md lists every one).
//
//   for (const KeyDoc& k : SystemConfigKeys()) std::cout << k.name << ": " << k.meaning << "\n";
#pragma once

#include <string>

namespace orrery {

struct KeyDoc {
  std::string name;
  std::string type;           // "int", "number", "bool (0/1/true/false)", "enum", "list of ..."
  std::string unit;           // "ns", "GB/s (2^30 B/s)", ... or ""
  std::string default_value;  // as text; "required" when the key must be present
  std::string allowed;        // "LIFO, FIFO, EXPLICIT", ">= 1", ...
  std::string meaning;
  std::string astra_sim;  // how ASTRA-sim 2.0 differs, or "" when it behaves the same
};

}  // namespace orrery
