// Prints the key tables of the jobs file, the sweep spec and nccl.yaml, each after the page that
// holds it (paste each into its page after changing a key).
//
//   bazel run -c opt //tests:print_input_keys
#include <iostream>

#include "tests/input_key_tables.h"

int main() {
  for (const orrery::InputKeyTable& t : orrery::InputKeyTables()) {
    std::cout << "<!-- " << t.doc << " -->\n" << t.markdown << "\n";
  }
  return 0;
}
