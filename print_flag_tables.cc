// Prints the flag tables of docs/cli.md (between its "generated" markers).
//
//   bazel run -c opt //:print_flag_tables > /tmp/flags.md
#include <iostream>

#include "flag_tables.h"

int main() {
  std::cout << orrery::CliFlagTables();
  return 0;
}
