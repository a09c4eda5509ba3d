// A JSON document as a tree, for files small enough to hold whole (reports, execution traces).
//
//   StatusOr<JsonValue> v = ParseJson(text, "report.json");
//   const JsonValue* ranks = v->Find("ranks");
//   if (ranks != nullptr && ranks->is_array()) for (const JsonValue& r : ranks->items) ...
//
// Numbers keep their text (`number_text`) besides their value, so that exact integers past
// 2^53 survive.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace orrery {
namespace profile {

struct JsonValue {
  enum class Type : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;                                        // a string's value, or a number's text
  std::vector<JsonValue> items;                            // array
  std::vector<std::pair<std::string, JsonValue>> members;  // object, in file order

  bool is_null() const { return type == Type::kNull; }
  bool is_number() const { return type == Type::kNumber; }
  bool is_string() const { return type == Type::kString; }
  bool is_array() const { return type == Type::kArray; }
  bool is_object() const { return type == Type::kObject; }
  // The member named `key` of an object (the first), or nullptr.
  const JsonValue* Find(std::string_view key) const;
  // A number that is a whole number fitting int64 (from its text), or nullopt.
  std::optional<int64_t> AsInt64() const;
};

StatusOr<JsonValue> ParseJson(std::string_view text, const std::string& file);

}  // namespace profile
}  // namespace orrery
