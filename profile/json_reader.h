// A fast pull reader of JSON text held in memory, for profiles of millions of events: nothing is
// built that the caller does not ask for, strings are views into the text unless they hold
// escapes, and a value the caller does not want is skipped with one scan.
//
//   JsonReader r(text, "rank-0.json");
//   if (!r.EnterObject()) return r.status();
//   std::string_view key;
//   while (r.NextKey(&key)) {
//     if (key == "traceEvents") { ...r.EnterArray(); while (r.NextElement()) {...} }
//     else r.Skip();
//   }
//   if (!r.ok()) return r.status();   // "<file>: byte 1234 (line 5): expected ':' after a key"
//
// Errors are sticky: after the first, every call returns false and status() says what and where.
// Text past the top-level value (other than white space) is the caller's to check (AtEnd()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"

namespace orrery {
namespace profile {

class JsonReader {
 public:
  enum class Type { kObject, kArray, kString, kNumber, kBool, kNull, kEnd, kError };

  JsonReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  // What the next value is, without consuming it (kEnd at the end of the text).
  Type Peek();
  // `{` / `[`: false (an error) when the next value is something else.
  bool EnterObject();
  bool EnterArray();
  // Inside an object: the next key, or false at its closing `}` (consumed) or on an error.
  bool NextKey(std::string_view* key);
  // Inside an array: true when another element follows, false at its closing `]` (consumed).
  bool NextElement();

  // A string value. `*raw` is the text between the quotes, escapes unresolved;
  // `*escaped` says whether it holds any (then Unescape it).
  bool ReadRawString(std::string_view* raw, bool* escaped);
  // A string value with its escapes resolved.
  bool ReadString(std::string* out);
  // A number's text (validated as JSON's number syntax).
  bool ReadNumberText(std::string_view* text);
  // A number that is a whole number fitting int64 (a fraction or exponent is an error).
  bool ReadInt64(int64_t* value);
  bool ReadDouble(double* value);
  // A number of microseconds as whole nanoseconds, exactly from its decimal digits (Kineto's
  // "ts": 1712195495519689.125 is 1712195495519689125 ns; a double would lose the last digits),
  // rounded half away from zero past the third decimal.
  bool ReadMicrosAsNanos(int64_t* ns);
  bool ReadBool(bool* value);
  // Whatever value comes next, of any depth.
  bool Skip();

  // Only white space remains.
  bool AtEnd();
  // Continues reading at `offset` outside any container (to read a value seen earlier again).
  void Reposition(size_t offset) {
    pos_ = offset;
    open_.clear();
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  size_t offset() const { return pos_; }
  const std::string& file() const { return file_; }
  // Records an error at the current position ("<file>: byte N (line L): <what>") unless one is
  // already recorded; returns false.
  bool Fail(const std::string& what);
  // The same at a given byte offset (e.g. where a value began).
  bool FailAt(size_t offset, const std::string& what);
  // The 1-based line of a byte offset (counted on demand: errors only).
  size_t LineOf(size_t offset) const;

  // Resolves JSON escapes (\n, \", \uXXXX with surrogate pairs) in a raw string.
  static bool Unescape(std::string_view raw, std::string* out);

 private:
  void SkipSpace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      ++pos_;
    }
  }
  bool Expect(char c, const char* what);
  // Scans a string whose opening quote is at pos_; leaves pos_ past the closing quote.
  bool ScanString(std::string_view* raw, bool* escaped);
  bool ScanNumber(std::string_view* text);
  bool ScanLiteral(std::string_view word);
  // Before a member of the innermost container: consumes the ',' that must separate it from
  // the one before, or the closing `close` (then pops the container and returns false).
  bool NextMember(char open, char close);
  // "'x'" or "the end of the text", for messages.
  std::string Describe(size_t at) const;

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  Status status_;
  // The open containers, innermost last: '{' or '[', upper-cased once a member was read (so a
  // ',' must come before the next one).
  std::string open_;
};

}  // namespace profile
}  // namespace orrery
