// Markdown tables of configuration keys: configs/README.md holds exactly these tables, printed
// by //configs:print_config_keys and checked by //configs:docs_test.
//
//   std::cout << KeyTableMarkdown("System keys", SystemConfigKeys());
#pragma once

#include <string>
#include <vector>

#include "config/key_doc.h"

namespace orrery {

// "### <title>", a blank line, then one row per key (key, type, unit, default, allowed, meaning,
// difference from ASTRA-sim 2.0).
std::string KeyTableMarkdown(const std::string& title, const std::vector<KeyDoc>& keys);

}  // namespace orrery
