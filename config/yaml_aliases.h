// YAML aliases bounded before a document is built: a file of a few hundred bytes can hold an
// "alias bomb" (ten references to a list of ten references to ..., nine levels deep: 10^9
// nodes), which yaml-cpp loads cheaply as shared nodes but which every walk over the document
// (a duplicate-key check, an emitter, a copy) then expands. ParseYamlDocument (schema.h), the
// loader every YAML reader goes through, calls this first.
//
//   Status s = CheckYamlAliases(text, "sweep.yaml");
//   // "sweep.yaml:10: alias '*a8' repeats a node of 100000000 nodes; aliases would expand this
//   //  file by more than 100000 nodes ..."
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace orrery {

// The most nodes aliases may add to one file, counted as if each alias were written out in full
// (its anchor's node, with the aliases inside it expanded too). Configuration files written by
// hand reuse a few small maps; a bomb adds millions.
constexpr uint64_t kMaxAliasNodes = 100000;

// Ok when the aliases of every document of `text` add at most `limit` nodes; else an error at
// the alias that passes the limit, naming it and its node's size. Text that is not valid YAML is
// left to the loader (Ok), except a stray ',', ']' or '}' where a document starts, on which
// yaml-cpp 0.7's LoadAll never ends (found by fuzz:comm_groups): an error at its line and
// column. Reads the text once, expanding nothing.
Status CheckYamlAliases(const std::string& text, const std::string& path,
                        uint64_t limit = kMaxAliasNodes);

}  // namespace orrery
