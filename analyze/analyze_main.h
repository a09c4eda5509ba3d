// `orrery analyze TRACE... [--report FILE.json]`; returns the process exit code.
#pragma once

#include <vector>

#include "config/key_doc.h"

namespace orrery {
namespace analyze {

// The flags of analyze as docs/cli.md lists them.
std::vector<KeyDoc> AnalyzeFlagDocs();

int AnalyzeMain(int argc, char** argv);

}  // namespace analyze
}  // namespace orrery
