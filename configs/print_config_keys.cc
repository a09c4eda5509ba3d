// Prints every configuration key as Markdown tables (the tables of configs/README.md).
//
//   bazel run //configs:print_config_keys > /tmp/keys.md
#include <iostream>

#include "config/key_table.h"
#include "config/system_config.h"
#include "memory/memory_config.h"
#include "network/network_config.h"

int main() {
  std::cout << orrery::KeyTableMarkdown("System keys (--system-configuration)",
                                        orrery::SystemConfigKeys())
            << "\n"
            << orrery::KeyTableMarkdown("Network keys (--network-configuration)",
                                        orrery::NetworkConfigKeys())
            << "\n"
            << orrery::KeyTableMarkdown("Remote-memory keys (--remote-memory-configuration)",
                                        orrery::MemoryConfigKeys())
            << "\n";
  return 0;
}
