#include "et_feeder/process_groups.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "config/comm_group_config.h"

namespace orrery {
namespace et {

namespace {

// One past the quote that closes the string opening at `at` (a backslash escapes the next
// character, as in Python and JSON); npos if unclosed.
size_t QuotedEnd(std::string_view v, size_t at) {
  for (size_t i = at + 1; i < v.size(); ++i) {
    if (v[i] == '\\') {
      ++i;
    } else if (v[i] == v[at]) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// The end of the bracketed or quoted value starting at `at` (one past its closing character),
// or of a bare value (at the next ',', ':' or closing bracket), in a Python literal; npos if
// unclosed.
size_t ValueEnd(std::string_view v, size_t at) {
  if (at >= v.size()) return std::string_view::npos;
  const char c = v[at];
  if (c == '\'' || c == '"') return QuotedEnd(v, at);
  if (c == '[' || c == '{' || c == '(') {
    int depth = 0;
    for (size_t i = at; i < v.size(); ++i) {
      if (v[i] == '\'' || v[i] == '"') {
        i = QuotedEnd(v, i);
        if (i == std::string_view::npos) return i;
        --i;
      } else if (v[i] == '[' || v[i] == '{' || v[i] == '(') {
        ++depth;
      } else if ((v[i] == ']' || v[i] == '}' || v[i] == ')') && --depth == 0) {
        return i + 1;
      }
    }
    return std::string_view::npos;
  }
  // A bare value (a number, None, a call such as timedelta(seconds=1800), b'bytes'): up to a ','
  // or ':' outside its own brackets and strings, or the bracket that closes its container.
  int depth = 0;
  for (size_t i = at; i < v.size(); ++i) {
    const char d = v[i];
    if (d == '\'' || d == '"') {
      i = QuotedEnd(v, i);
      if (i == std::string_view::npos) return i;
      --i;
    } else if (d == '(' || d == '[' || d == '{') {
      ++depth;
    } else if (d == ')' || d == ']' || d == '}') {
      if (depth == 0) return i;
      --depth;
    } else if ((d == ',' || d == ':') && depth == 0) {
      return i;
    }
  }
  return v.size();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Chakra's PyTorch converter writes a METADATA node's inputs as str() of PyTorch's list of
// inputs, and process_group:init's one input is the groups as a JSON string: ['[{"pg_name":
// ...}]'] (ASTRA-sim strips the two characters at each end). When `v` is a list of one string
// that mentions pg_name, returns that string's text with Python's escapes undone.
std::optional<std::string> OneStringInList(std::string_view v) {
  v = Trim(v);
  if (v.size() < 4 || v.front() != '[' || v.back() != ']') return std::nullopt;
  const std::string_view inside = Trim(v.substr(1, v.size() - 2));
  if (inside.empty() || (inside.front() != '\'' && inside.front() != '"') ||
      QuotedEnd(inside, 0) != inside.size() || inside.find("pg_name") == std::string_view::npos) {
    return std::nullopt;
  }
  std::string text;
  text.reserve(inside.size());
  for (size_t i = 1; i + 1 < inside.size(); ++i) {
    const char c = inside[i];
    if (c == '\\' && i + 2 < inside.size()) {
      const char next = inside[i + 1];
      if (next == '\\' || next == '\'' || next == '"') {
        text += next;
        ++i;
        continue;
      }
    }
    text += c;
  }
  return text;
}

std::string_view Unquote(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
    return s.substr(1, s.size() - 2);
  }
  return s;
}

// The entries of one dict literal "{...}": key -> value text (values trimmed, not unquoted).
// False if it is not a dict of quoted keys.
bool ParseDict(std::string_view d,
               std::vector<std::pair<std::string_view, std::string_view>>* out) {
  size_t i = 1;
  while (true) {
    while (i < d.size() && (std::isspace(static_cast<unsigned char>(d[i])) || d[i] == ',')) ++i;
    if (i >= d.size() || d[i] == '}') return true;
    const size_t key_end = ValueEnd(d, i);
    if (key_end == std::string_view::npos) return false;
    const std::string_view key = Unquote(Trim(d.substr(i, key_end - i)));
    i = key_end;
    while (i < d.size() && std::isspace(static_cast<unsigned char>(d[i]))) ++i;
    if (i >= d.size() || d[i] != ':') return false;
    ++i;
    while (i < d.size() && std::isspace(static_cast<unsigned char>(d[i]))) ++i;
    const size_t value_end = ValueEnd(d, i);
    if (value_end == std::string_view::npos) return false;
    out->emplace_back(key, Trim(d.substr(i, value_end - i)));
    i = value_end;
  }
}

}  // namespace

StatusOr<std::vector<ProcessGroupSpec>> ParseProcessGroups(std::string_view values, int num_ranks) {
  std::vector<ProcessGroupSpec> out;
  // Chakra's converter's form, a list holding the JSON as one string; offsets below are then
  // in that string's text.
  const std::optional<std::string> json = OneStringInList(values);
  const std::string_view v = json ? std::string_view(*json) : std::string_view(values);
  auto bad = [&](const std::string& what) {
    return Status::Error("METADATA: " + what +
                         "; expected a list of {'pg_name': '<group number>', "
                         "'ranks': [<rank>, ...]} as PyTorch writes it");
  };
  // One pass over the text, outside strings, with a stack of open brackets: a dict that has a
  // 'pg_name' key of its own is a process group, parsed when it closes; everything else (other
  // metadata, other dicts) is passed over. Linear in the text's length however deep it nests.
  struct Open {
    char bracket;
    size_t at;
    bool group = false;  // a dict with a 'pg_name' key directly inside
  };
  std::vector<Open> stack;
  int open_groups = 0;                            // frames of the stack that are process groups
  std::vector<std::pair<size_t, size_t>> groups;  // each group dict's [open, close)
  for (size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (c == '\'' || c == '"') {
      const size_t end = QuotedEnd(v, i);
      if (end == std::string_view::npos) {
        if (v.find("pg_name", i) == std::string_view::npos) break;
        return bad("a string at offset " + std::to_string(i) + " is not closed");
      }
      // A key 'pg_name' of the innermost open dict.
      if (!stack.empty() && stack.back().bracket == '{' &&
          v.substr(i + 1, end - i - 2) == "pg_name") {
        size_t k = end;
        while (k < v.size() && std::isspace(static_cast<unsigned char>(v[k]))) ++k;
        if (k < v.size() && v[k] == ':' && !stack.back().group) {
          stack.back().group = true;
          ++open_groups;
        }
      }
      i = end - 1;
    } else if (c == '{' || c == '[' || c == '(') {
      stack.push_back(Open{c, i});
    } else if (c == '}' || c == ']' || c == ')') {
      if (stack.empty()) continue;  // not a literal we can read: passed over
      const char opens = c == '}' ? '{' : c == ']' ? '[' : '(';
      if (stack.back().bracket != opens) {
        // Unbalanced: inside a process group that is an error, elsewhere it is passed over.
        if (open_groups > 0) {
          return bad("a '" + std::string(1, c) + "' at offset " + std::to_string(i) +
                     " does not close the '" + std::string(1, stack.back().bracket) +
                     "' at offset " + std::to_string(stack.back().at) +
                     ", inside a process group's dict");
        }
        continue;
      }
      const Open top = stack.back();
      stack.pop_back();
      if (top.group) --open_groups;
      // A group inside another group is part of that one's description, not a group of its own
      // (and parsing only the outermost keeps the pass linear).
      if (top.bracket == '{' && top.group && open_groups == 0) groups.emplace_back(top.at, i + 1);
    }
  }
  for (const Open& o : stack) {
    if (o.group) return bad("a '{' at offset " + std::to_string(o.at) + " is not closed");
  }
  for (const auto& [open, close] : groups) {
    const std::string_view dict = v.substr(open, close - open);
    std::vector<std::pair<std::string_view, std::string_view>> entries;
    if (!ParseDict(dict, &entries)) return bad("'" + std::string(dict) + "' is not a dict");
    std::optional<std::string_view> name, ranks_text;
    for (const auto& [key, value] : entries) {
      if (key == "pg_name") name = Unquote(value);
      if (key == "ranks") ranks_text = value;
    }
    if (!name || name->empty() || !std::all_of(name->begin(), name->end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      continue;
    }
    const int pg = ParseDecimalId(*name);
    if (pg < 0) {
      return Status::Error("METADATA: pg_name '" + std::string(*name) +
                           "' is not a communicator group number; expected 0 to " +
                           std::to_string(kMaxCommGroupId) + " (\"\" or \"0\": every NPU)");
    }
    // A list, or a tuple.
    if (!ranks_text || ranks_text->size() < 2 ||
        !((ranks_text->front() == '[' && ranks_text->back() == ']') ||
          (ranks_text->front() == '(' && ranks_text->back() == ')'))) {
      return bad("process group " + std::to_string(pg) + " has " +
                 (ranks_text ? "'ranks' " + std::string(*ranks_text) : std::string("no 'ranks'")));
    }
    std::vector<int> ranks;
    std::string_view list = ranks_text->substr(1, ranks_text->size() - 2);
    while (!Trim(list).empty()) {
      const size_t comma = list.find(',');
      const std::string_view rank = Trim(list.substr(0, comma));
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      const int value = rank.empty() || rank.front() == '-' ? -1 : ParseDecimalId(rank);
      if (value < 0 || value >= num_ranks) {
        return Status::Invalid("", "METADATA: process group " + std::to_string(pg) + "'s rank",
                               std::string(rank),
                               "a rank in [0, " + std::to_string(num_ranks - 1) + "]");
      }
      ranks.push_back(value);
    }
    if (ranks.empty()) {
      for (int i = 0; i < num_ranks; ++i) ranks.push_back(i);
    }
    out.push_back(ProcessGroupSpec{pg, std::move(ranks)});
  }
  return out;
}

}  // namespace et
}  // namespace orrery
