// The flag tables of docs/cli.md, from the flags' declarations (runner/run_flags.h,
// sweep/cli.cc, et_feeder/llm_workload_main.cc, validate/measurement_cli.h, ...): printed by
// //:print_flag_tables, checked by //tests:cli_docs_test.
#pragma once

#include <string>

namespace orrery {

// One Markdown table per command, each under a "### " title.
std::string CliFlagTables();

}  // namespace orrery
