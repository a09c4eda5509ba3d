// `orrery import --kineto TRACE [--kineto TRACE ...] [--et ET ...] --output PREFIX`; returns the
// process exit code.
#pragma once

#include <vector>

#include "config/key_doc.h"

namespace orrery {
namespace profile {

// The flags of import as docs/cli.md lists them.
std::vector<KeyDoc> ImportFlagDocs();

int ImportMain(int argc, char** argv);

}  // namespace profile
}  // namespace orrery
