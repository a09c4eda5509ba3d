// The size limits of library code (STYLE.md, issue 56): what a C++ source holds that they
// bound, read from its text without compiling it.
//
//   SourceFacts facts = ScanSource(text);
//   for (const FunctionSpan& f : facts.functions) {
//     if (f.lines() > kMaxFunctionLines) ...  // f.name, f.first_line
//   }
//   for (int line : facts.throw_lines) ...      // a `throw` on that line
//
// Comments, string and character literals (raw strings too) and preprocessor lines are blanked
// out first, so a `throw` or a brace in them counts for nothing. A function is a brace block at
// namespace or class scope whose head (the text since the previous `;`, `{` or `}`) has a
// parameter list and is not a namespace, class, struct, union, enum or an initializer
// (`= {...}`); a lambda assigned at namespace scope is one too. Lambdas and blocks inside a
// function are part of it. A constructor's member initializers in braces (`: a_{1} {`) belong to
// the constructor.
#pragma once

#include <string>
#include <vector>

namespace orrery {

// The limits, in lines.
inline constexpr int kMaxFunctionLines = 120;
inline constexpr int kMaxFileLines = 800;

struct FunctionSpan {
  std::string name;    // the identifier before the parameter list ("NpuSystem::StartCollective")
  int first_line = 0;  // of its head (1-based), template line included
  int last_line = 0;   // of its closing brace
  int lines() const { return last_line - first_line + 1; }
};

struct SourceFacts {
  int lines = 0;  // newlines, plus one for a last line without one
  std::vector<FunctionSpan> functions;
  std::vector<int> throw_lines;  // 1-based, one entry per `throw`
};

// `text` with comments, literals and preprocessor lines replaced by spaces (newlines kept, and
// a literal's quotes), so positions and line numbers are the same as in `text`.
std::string BlankNonCode(const std::string& text);

SourceFacts ScanSource(const std::string& text);

}  // namespace orrery
