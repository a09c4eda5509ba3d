#include "tests/code_limits.h"

#include <algorithm>
#include <cctype>
#include <cstddef>

namespace orrery {
namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Replaces text[from, to) by spaces, keeping newlines.
void Blank(std::string* text, size_t from, size_t to) {
  for (size_t i = from; i < to && i < text->size(); ++i) {
    if ((*text)[i] != '\n') (*text)[i] = ' ';
  }
}

// The end of the literal that opens at `at` with `quote` (past its closing quote, or the end of
// the line when it is not closed there).
size_t QuotedEnd(const std::string& s, size_t at, char quote) {
  size_t i = at + 1;
  while (i < s.size() && s[i] != quote && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
  return std::min(s.size(), i + 1);
}

// A raw string literal R"delim( ... )delim" opening at `at` (the R): its end, or 0 if none opens
// there.
size_t RawStringEnd(const std::string& s, size_t at) {
  if (s.compare(at, 2, "R\"") != 0) return 0;
  const size_t open = s.find('(', at + 2);
  if (open == std::string::npos) return 0;
  const std::string close = ")" + s.substr(at + 2, open - at - 2) + "\"";
  const size_t end = s.find(close, open + 1);
  return end == std::string::npos ? s.size() : end + close.size();
}

// The end of a preprocessor directive starting at `at` (its line, with continuations).
size_t DirectiveEnd(const std::string& s, size_t at) {
  size_t i = at;
  while (i < s.size()) {
    const size_t nl = s.find('\n', i);
    if (nl == std::string::npos) return s.size();
    if (nl == 0 || s[nl - 1] != '\\') return nl;
    i = nl + 1;
  }
  return s.size();
}

// The first word of a head, past `template <...>`, attributes and `inline`/`typedef`/`static`.
std::string FirstWord(const std::string& head) {
  size_t i = 0;
  while (i < head.size()) {
    while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
    if (head.compare(i, 2, "[[") == 0) {
      const size_t end = head.find("]]", i);
      i = end == std::string::npos ? head.size() : end + 2;
      continue;
    }
    size_t j = i;
    while (j < head.size() && IsIdentChar(head[j])) ++j;
    const std::string word = head.substr(i, j - i);
    if (word == "template") {
      int depth = 0;
      for (i = j; i < head.size(); ++i) {
        if (head[i] == '<') ++depth;
        if (head[i] == '>' && --depth == 0) break;
      }
      ++i;
      continue;
    }
    if (word == "inline" || word == "typedef" || word == "static") {
      i = j;
      continue;
    }
    return word;
  }
  return "";
}

// The position of the last '=' of `head` outside brackets that is an assignment (not ==, <=,
// >=, != or part of an operator's name), or npos.
size_t TopLevelAssignment(const std::string& head) {
  size_t found = std::string::npos;
  int depth = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    const char c = head[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c != '=' || depth != 0) continue;
    const char before = i > 0 ? head[i - 1] : ' ';
    const char after = i + 1 < head.size() ? head[i + 1] : ' ';
    if (after == '=' || before == '=' || before == '<' || before == '>' || before == '!') continue;
    const size_t op = head.rfind("operator", i);
    if (op != std::string::npos && head.find_first_not_of(" +-*/%^&|<>!=", op + 8) >= i) continue;
    found = i;
  }
  return found;
}

// The name before the parameter list that starts at `paren` in `head`.
std::string NameBefore(const std::string& head, size_t paren) {
  size_t end = paren;
  while (end > 0 && std::isspace(static_cast<unsigned char>(head[end - 1]))) --end;
  size_t begin = end;
  while (begin > 0 &&
         (IsIdentChar(head[begin - 1]) || head[begin - 1] == ':' || head[begin - 1] == '~')) {
    --begin;
  }
  return begin == end ? "operator" : head.substr(begin, end - begin);
}

// Drops access labels ("public:") from the front of a head; returns how many characters.
size_t AccessLabelLength(const std::string& head) {
  size_t i = 0;
  while (true) {
    const size_t start = head.find_first_not_of(" \t\n", i);
    if (start == std::string::npos) return head.size();
    bool label = false;
    for (const char* word : {"public", "private", "protected"}) {
      const size_t n = std::string(word).size();
      if (head.compare(start, n, word) != 0) continue;
      const size_t colon = head.find_first_not_of(" \t\n", start + n);
      if (colon != std::string::npos && head[colon] == ':' &&
          (colon + 1 >= head.size() || head[colon + 1] != ':')) {
        i = colon + 1;
        label = true;
      }
    }
    if (!label) return start;
  }
}

enum class Block { kScope, kFunction, kOther };

// What the brace block whose head is `head` is; *name the function's name.
Block Classify(const std::string& head, std::string* name) {
  const std::string first = FirstWord(head);
  if (first == "namespace" || first == "class" || first == "struct" || first == "union" ||
      first == "extern") {
    return Block::kScope;
  }
  if (first == "enum") return Block::kOther;
  const size_t assign = TopLevelAssignment(head);
  if (assign != std::string::npos) {
    const size_t value = head.find_first_not_of(" \t\n", assign + 1);
    if (value == std::string::npos || head[value] != '[') return Block::kOther;  // an initializer
    *name = NameBefore(head, assign);                                            // a lambda
    return Block::kFunction;
  }
  const size_t paren = head.find('(');
  if (paren == std::string::npos) return Block::kOther;  // a braced initializer
  *name = NameBefore(head, paren);
  return Block::kFunction;
}

int LineAt(const std::vector<size_t>& line_starts, size_t pos) {
  return static_cast<int>(std::upper_bound(line_starts.begin(), line_starts.end(), pos) -
                          line_starts.begin());
}

}  // namespace

std::string BlankNonCode(const std::string& text) {
  std::string s = text;
  bool line_start = true;  // only spaces since the last newline
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    size_t end = 0;
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (line_start && c == '#') {
      end = DirectiveEnd(s, i);
    } else if (s.compare(i, 2, "//") == 0) {
      end = s.find('\n', i);
      if (end == std::string::npos) end = s.size();
    } else if (s.compare(i, 2, "/*") == 0) {
      end = s.find("*/", i + 2);
      end = end == std::string::npos ? s.size() : end + 2;
    } else if (c == 'R' && (i == 0 || !IsIdentChar(s[i - 1]) || s[i - 1] == '8' ||
                            s[i - 1] == 'u' || s[i - 1] == 'U' || s[i - 1] == 'L')) {
      end = RawStringEnd(s, i);
      if (end != 0) {
        Blank(&s, i + 2, end - 1);  // keeps R" and the closing quote
        line_start = false;
        i = end;
        continue;
      }
    } else if (c == '"' || (c == '\'' && (i == 0 || !IsIdentChar(s[i - 1])))) {
      end = QuotedEnd(s, i, c);
      Blank(&s, i + 1, end - 1);
      line_start = false;
      i = end;
      continue;
    }
    if (end != 0) {
      Blank(&s, i, end);
      i = end;
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) line_start = false;
    ++i;
  }
  return s;
}

SourceFacts ScanSource(const std::string& text) {
  SourceFacts facts;
  const std::string s = BlankNonCode(text);
  std::vector<size_t> line_starts = {0};
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n') line_starts.push_back(i + 1);
  }
  facts.lines = static_cast<int>(line_starts.size()) - (s.empty() || s.back() == '\n' ? 1 : 0);

  struct Frame {
    Block kind;
    FunctionSpan span;
  };
  std::vector<Frame> stack;
  size_t head_start = 0;
  // The function that closed last at the current scope level, and where its '}' was: a
  // constructor's braced member initializer is followed by the rest of the constructor.
  size_t last_function_end = std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == 't' && s.compare(i, 5, "throw") == 0 && (i == 0 || !IsIdentChar(s[i - 1])) &&
        (i + 5 >= s.size() || !IsIdentChar(s[i + 5]))) {
      facts.throw_lines.push_back(LineAt(line_starts, i));
    }
    const bool in_code = !stack.empty() && stack.back().kind != Block::kScope;
    if (c == ';' && !in_code) head_start = i + 1;
    if (c == '{') {
      if (in_code) {
        stack.push_back({Block::kOther, {}});
        continue;
      }
      std::string head = s.substr(head_start, i - head_start);
      const size_t skip = AccessLabelLength(head);
      head = head.substr(skip);
      const size_t rest = head.find_first_not_of(" \t\n");
      const bool continues = last_function_end != std::string::npos &&
                             s.find_first_not_of(" \t\n", last_function_end + 1) >= head_start &&
                             (rest == std::string::npos || head[rest] == ',');
      Frame f{Block::kOther, {}};
      if (continues) {
        f.kind = Block::kFunction;
        f.span = facts.functions.back();
        facts.functions.pop_back();
      } else {
        f.kind = Classify(head, &f.span.name);
        f.span.first_line =
            LineAt(line_starts, head_start + skip + (rest == std::string::npos ? 0 : rest));
      }
      stack.push_back(f);
      head_start = i + 1;  // a scope's first member starts after its brace
      last_function_end = std::string::npos;
      continue;
    }
    if (c == '}' && !stack.empty()) {
      Frame f = stack.back();
      stack.pop_back();
      const bool closes_block = stack.empty() || stack.back().kind == Block::kScope;
      if (!closes_block) continue;
      head_start = i + 1;
      last_function_end = std::string::npos;
      if (f.kind == Block::kFunction) {
        f.span.last_line = LineAt(line_starts, i);
        facts.functions.push_back(f.span);
        last_function_end = i;
      }
    }
  }
  return facts;
}

}  // namespace orrery
