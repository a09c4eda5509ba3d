#include "common/status.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace orrery {

Status Status::Invalid(const std::string& where, const std::string& what, const std::string& bad,
                       const std::string& valid) {
  std::string m = where.empty() ? "" : where + ": ";
  m += what + " is " + (bad.empty() ? "empty" : "'" + bad + "'");
  if (!valid.empty()) m += "; expected " + valid;
  return Error(std::move(m));
}

std::string Status::message() const {
  std::string out;
  for (size_t i = 0; i < problems_.size(); ++i) {
    if (i) out += '\n';
    // Bytes quoted from a broken input (a control character in a trace's name or a topology
    // file) are shown as \xNN, not sent raw to the terminal; line breaks and tabs stay.
    for (const char c : problems_[i]) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) {
        static const char kHex[] = "0123456789abcdef";
        out += "\\x";
        out += kHex[u >> 4];
        out += kHex[u & 15];
      } else {
        out += c;
      }
    }
  }
  return out;
}

Status Status::WithContext(const std::string& context) const {
  Status s;
  for (const auto& p : problems_) s.problems_.push_back(context + ": " + p);
  return s;
}

void CheckFailed(const char* file, int line, const char* cond, const std::string& msg) {
  std::fprintf(stderr, "internal error at %s:%d: check '%s' failed: %s\n", file, line, cond,
               msg.c_str());
  std::abort();
}

static size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string NotARegularFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "";
  if (S_ISDIR(st.st_mode)) return path + ": is a directory; expected a file";
  // A pipe is read to its end (a shell's <(...)); a device such as /dev/zero has none.
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    return path + ": is not a regular file (a device or a socket); expected a file";
  }
  return "";
}

std::optional<uint64_t> ParseWholeNumber(const std::string& s, uint64_t most) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > most / 10) return std::nullopt;
    v *= 10;
    if (d > most - v) return std::nullopt;
    v += d;
  }
  return v;
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  // Up to a third of the word's letters may differ (up to three for short words, but never
  // half of them): "latancy" -> "latency", "gird" -> "grid"; nothing for "foo" or "".
  std::string best;
  size_t best_d = std::max(word.size() / 3, std::min<size_t>(3, word.size() / 2)) + 1;
  for (const auto& c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

}  // namespace orrery
