// `orrery analyze TRACE... [--report FILE.json]`; returns the process exit code.
#pragma once

namespace orrery {
namespace analyze {

int AnalyzeMain(int argc, char** argv);

}  // namespace analyze
}  // namespace orrery
