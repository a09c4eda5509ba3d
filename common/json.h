// JSON string literals for the hand-written JSON outputs (reports, timelines, sweeps).
//
//   std::string s = JsonString("a \"b\"\n");   // "\"a \\\"b\\\"\\n\""
//   AppendJsonString(&out, name);               // the same, appended to `out`
#pragma once

#include <string>
#include <string_view>

namespace orrery {

// Appends `s` as a quoted JSON string: `"` and `\` escaped, \n and \t by name, other control
// characters as \u00XX; everything else (UTF-8 included) as it is.
void AppendJsonString(std::string* out, std::string_view s);
std::string JsonString(std::string_view s);

}  // namespace orrery
