// The key tables of the input files that are not configs (jobs files, sweep specs, nccl.yaml),
// as the docs hold them: made from each loader's schema, printed by //tests:print_input_keys
// and checked against docs/ by //tests:input_docs_test.
//
//   for (const InputKeyTable& t : InputKeyTables()) std::cout << t.doc << "\n" << t.markdown;
#pragma once

#include <string>
#include <vector>

#include "config/key_doc.h"

namespace orrery {

struct InputKeyTable {
  std::string doc;           // the page that holds the table, e.g. "docs/workloads.md"
  std::vector<KeyDoc> keys;  // as declared
  std::string markdown;      // KeyTableMarkdown of `keys`
};

std::vector<InputKeyTable> InputKeyTables();

}  // namespace orrery
