#include "profile/json_reader.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace orrery {
namespace profile {

std::string JsonReader::Describe(size_t at) const {
  if (at >= text_.size()) return "the end of the text";
  const unsigned char c = static_cast<unsigned char>(text_[at]);
  if (c < 0x20 || c >= 0x7f) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
  }
  return std::string("'") + static_cast<char>(c) + "'";
}

size_t JsonReader::LineOf(size_t offset) const {
  offset = std::min(offset, text_.size());
  return 1 + static_cast<size_t>(std::count(text_.begin(), text_.begin() + offset, '\n'));
}

bool JsonReader::FailAt(size_t offset, const std::string& what) {
  if (!status_.ok()) return false;
  status_ = Status::Error(file_ + ": byte " + std::to_string(offset) + " (line " +
                          std::to_string(LineOf(offset)) + "): " + what);
  return false;
}

bool JsonReader::Fail(const std::string& what) { return FailAt(pos_, what); }

JsonReader::Type JsonReader::Peek() {
  if (!ok()) return Type::kError;
  SkipSpace();
  if (pos_ >= text_.size()) return Type::kEnd;
  switch (text_[pos_]) {
    case '{':
      return Type::kObject;
    case '[':
      return Type::kArray;
    case '"':
      return Type::kString;
    case 't':
    case 'f':
      return Type::kBool;
    case 'n':
      return Type::kNull;
    default:
      return Type::kNumber;  // validated when read
  }
}

bool JsonReader::Expect(char c, const char* what) {
  SkipSpace();
  if (pos_ < text_.size() && text_[pos_] == c) {
    ++pos_;
    return true;
  }
  if (pos_ >= text_.size()) {
    return Fail(std::string("the text ends where ") + what +
                " was expected (is the file truncated?)");
  }
  return Fail(std::string("expected ") + what + ", found " + Describe(pos_));
}

bool JsonReader::EnterObject() {
  if (!ok()) return false;
  if (!Expect('{', "an object ('{')")) return false;
  open_.push_back('{');
  return true;
}

bool JsonReader::EnterArray() {
  if (!ok()) return false;
  if (!Expect('[', "an array ('[')")) return false;
  open_.push_back('[');
  return true;
}

bool JsonReader::NextMember(char open, char close) {
  if (!ok()) return false;
  const char top = open_.empty() ? '\0' : open_.back();
  const bool in_object = top == '{' || top == 'O';
  if (top == '\0' || in_object != (open == '{')) {
    return Fail("internal: the reader is not inside the expected container");
  }
  SkipSpace();
  if (pos_ >= text_.size()) {
    return Fail(std::string("the text ends inside ") + (open == '{' ? "an object" : "an array") +
                " (is the file truncated?)");
  }
  const bool had_member = top == 'O' || top == 'A';
  if (text_[pos_] == close) {
    ++pos_;
    open_.pop_back();
    return false;
  }
  if (had_member) {
    if (text_[pos_] != ',') {
      return Fail(std::string("expected ',' or '") + close + "' after a " +
                  (open == '{' ? "member of an object" : "element of an array") + ", found " +
                  Describe(pos_));
    }
    ++pos_;
    SkipSpace();
  } else {
    open_.back() = open == '{' ? 'O' : 'A';
  }
  return true;
}

bool JsonReader::NextKey(std::string_view* key) {
  if (!NextMember('{', '}')) return false;
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    return Fail("expected a key (a string) in an object, found " + Describe(pos_));
  }
  bool escaped = false;
  if (!ScanString(key, &escaped)) return false;
  // Keys with escapes are compared escaped; Kineto writes none.
  return Expect(':', "':' after a key");
}

bool JsonReader::NextElement() { return NextMember('[', ']'); }

bool JsonReader::ScanString(std::string_view* raw, bool* escaped) {
  const size_t start = pos_ + 1;
  const char* base = text_.data();
  const size_t end = text_.size();
  size_t i = start;
  *escaped = false;
  for (;;) {
    const void* q = std::memchr(base + i, '"', end - i);
    if (q == nullptr) {
      return FailAt(pos_, "a string is never closed (is the file truncated?)");
    }
    const size_t quote = static_cast<size_t>(static_cast<const char*>(q) - base);
    // The quote closes the string unless an odd run of backslashes precedes it.
    size_t backslashes = 0;
    while (quote - backslashes > start && base[quote - backslashes - 1] == '\\') ++backslashes;
    if (!*escaped && std::memchr(base + i, '\\', quote - i) != nullptr) *escaped = true;
    if (backslashes % 2 == 0) {
      *raw = std::string_view(base + start, quote - start);
      pos_ = quote + 1;
      return true;
    }
    i = quote + 1;
  }
}

bool JsonReader::ReadRawString(std::string_view* raw, bool* escaped) {
  if (!ok()) return false;
  SkipSpace();
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    return Fail("expected a string, found " + Describe(pos_));
  }
  return ScanString(raw, escaped);
}

bool JsonReader::ReadString(std::string* out) {
  std::string_view raw;
  bool escaped = false;
  const size_t at = pos_;
  if (!ReadRawString(&raw, &escaped)) return false;
  if (!escaped) {
    out->assign(raw.data(), raw.size());
    return true;
  }
  if (!Unescape(raw, out)) return FailAt(at, "a string holds an invalid escape sequence");
  return true;
}

namespace {

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

bool Hex4(std::string_view s, size_t at, uint32_t* v) {
  if (at + 4 > s.size()) return false;
  *v = 0;
  for (size_t k = 0; k < 4; ++k) {
    const char c = s[at + k];
    uint32_t d = 0;
    if (c >= '0' && c <= '9') {
      d = static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      d = static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return false;
    }
    *v = *v * 16 + d;
  }
  return true;
}

}  // namespace

bool JsonReader::Unescape(std::string_view raw, std::string* out) {
  out->clear();
  out->reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i >= raw.size()) return false;
    switch (raw[i]) {
      case '"':
      case '\\':
      case '/':
        out->push_back(raw[i]);
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'u': {
        uint32_t cp = 0;
        if (!Hex4(raw, i + 1, &cp)) return false;
        i += 4;
        if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < raw.size() + 0 && raw[i + 1] == '\\' &&
            raw[i + 2] == 'u') {
          uint32_t low = 0;
          if (Hex4(raw, i + 3, &low) && low >= 0xdc00 && low < 0xe000) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
            i += 6;
          }
        }
        AppendUtf8(cp, out);
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

bool JsonReader::ScanNumber(std::string_view* text) {
  const size_t start = pos_;
  size_t i = pos_;
  const size_t n = text_.size();
  if (i < n && text_[i] == '-') ++i;
  const size_t int_start = i;
  while (i < n && text_[i] >= '0' && text_[i] <= '9') ++i;
  bool valid = i > int_start && !(text_[int_start] == '0' && i - int_start > 1);
  if (valid && i < n && text_[i] == '.') {
    const size_t frac = ++i;
    while (i < n && text_[i] >= '0' && text_[i] <= '9') ++i;
    valid = i > frac;
  }
  if (valid && i < n && (text_[i] == 'e' || text_[i] == 'E')) {
    ++i;
    if (i < n && (text_[i] == '+' || text_[i] == '-')) ++i;
    const size_t exp = i;
    while (i < n && text_[i] >= '0' && text_[i] <= '9') ++i;
    valid = i > exp;
  }
  if (!valid) {
    if (start >= n) return Fail("the text ends where a value was expected (is it truncated?)");
    return Fail("expected a value (object, array, string, number, true, false or null), found " +
                Describe(start));
  }
  *text = text_.substr(start, i - start);
  pos_ = i;
  return true;
}

bool JsonReader::ReadNumberText(std::string_view* text) {
  if (!ok()) return false;
  SkipSpace();
  if (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '{' || text_[pos_] == '[' ||
                              text_[pos_] == 't' || text_[pos_] == 'f' || text_[pos_] == 'n')) {
    return Fail("expected a number, found " + Describe(pos_));
  }
  return ScanNumber(text);
}

bool JsonReader::ReadInt64(int64_t* value) {
  std::string_view t;
  const size_t at = pos_;
  if (!ReadNumberText(&t)) return false;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), *value);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size()) {
    // 3.0 or 1e3 is still a whole number.
    double d = 0;
    const auto rd = std::from_chars(t.data(), t.data() + t.size(), d);
    // (The range first: converting a double past int64_t's range is undefined.)
    if (rd.ec == std::errc() && d > -9.2e18 && d < 9.2e18 &&
        d == static_cast<double>(static_cast<int64_t>(d))) {
      *value = static_cast<int64_t>(d);
      return true;
    }
    return FailAt(at, "expected a whole number, found " + std::string(t));
  }
  return true;
}

bool JsonReader::ReadDouble(double* value) {
  std::string_view t;
  if (!ReadNumberText(&t)) return false;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), *value);
  if (r.ec != std::errc()) return Fail("a number is out of range: " + std::string(t));
  return true;
}

bool JsonReader::ReadMicrosAsNanos(int64_t* ns) {
  std::string_view t;
  const size_t at = pos_;
  if (!ReadNumberText(&t)) return false;
  size_t i = 0;
  const bool negative = !t.empty() && t[0] == '-';
  if (negative) ++i;
  int64_t whole = 0;
  bool overflow = false;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
    overflow |= __builtin_mul_overflow(whole, 10, &whole) ||
                __builtin_add_overflow(whole, t[i] - '0', &whole);
  }
  int64_t frac = 0;
  int digits = 0;
  bool round_up = false;
  if (i < t.size() && t[i] == '.') {
    for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
      if (digits < 3) {
        frac = frac * 10 + (t[i] - '0');
        ++digits;
      } else if (digits == 3) {
        round_up = t[i] >= '5';
        ++digits;
      }
    }
  }
  if (i < t.size()) {
    // An exponent: rare in profiles; a double is exact enough for it.
    double d = 0;
    std::from_chars(t.data(), t.data() + t.size(), d);
    const double v = d * 1000.0;
    if (!(v > -9.2e18 && v < 9.2e18))
      return FailAt(at, "a time is out of range: " + std::string(t));
    *ns = static_cast<int64_t>(v < 0 ? v - 0.5 : v + 0.5);
    return true;
  }
  while (digits < 3) {
    frac *= 10;
    ++digits;
  }
  int64_t v = 0;
  overflow |= __builtin_mul_overflow(whole, 1000, &v) || __builtin_add_overflow(v, frac, &v) ||
              __builtin_add_overflow(v, round_up ? 1 : 0, &v);
  if (overflow) return FailAt(at, "a time is out of range: " + std::string(t));
  *ns = negative ? -v : v;
  return true;
}

bool JsonReader::ScanLiteral(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) {
    return Fail("expected a value (object, array, string, number, true, false or null), found " +
                Describe(pos_));
  }
  pos_ += word.size();
  return true;
}

bool JsonReader::ReadBool(bool* value) {
  if (!ok()) return false;
  SkipSpace();
  if (pos_ < text_.size() && text_[pos_] == 't') {
    *value = true;
    return ScanLiteral("true");
  }
  if (pos_ < text_.size() && text_[pos_] == 'f') {
    *value = false;
    return ScanLiteral("false");
  }
  return Fail("expected true or false, found " + Describe(pos_));
}

bool JsonReader::Skip() {
  if (!ok()) return false;
  SkipSpace();
  if (pos_ >= text_.size())
    return Fail("the text ends where a value was expected (is it truncated?)");
  const char c = text_[pos_];
  if (c == '"') {
    std::string_view raw;
    bool escaped = false;
    return ScanString(&raw, &escaped);
  }
  if (c == 't') return ScanLiteral("true");
  if (c == 'f') return ScanLiteral("false");
  if (c == 'n') return ScanLiteral("null");
  if (c != '{' && c != '[') {
    std::string_view t;
    return ScanNumber(&t);
  }
  // A container: its members are validated loosely (brackets matched, strings closed), which
  // is all skipping needs; a value that is read is validated in full.
  std::string stack;
  const size_t start = pos_;
  const char* base = text_.data();
  const size_t n = text_.size();
  while (pos_ < n) {
    const char d = base[pos_];
    if (d == '"') {
      std::string_view raw;
      bool escaped = false;
      if (!ScanString(&raw, &escaped)) return false;
      continue;
    }
    if (d == '{' || d == '[') {
      stack.push_back(d == '{' ? '}' : ']');
    } else if (d == '}' || d == ']') {
      if (stack.empty() || stack.back() != d) {
        return Fail(std::string("a '") + d +
                    "' closes nothing open here (the value began at byte " + std::to_string(start) +
                    ")");
      }
      stack.pop_back();
      if (stack.empty()) {
        ++pos_;
        return true;
      }
    }
    ++pos_;
  }
  return FailAt(start, "a value is never closed (is the file truncated?)");
}

bool JsonReader::AtEnd() {
  SkipSpace();
  return pos_ >= text_.size();
}

}  // namespace profile
}  // namespace orrery
