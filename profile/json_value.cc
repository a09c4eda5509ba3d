#include "profile/json_value.h"

#include <charconv>

#include "profile/json_reader.h"

namespace orrery {
namespace profile {

const JsonValue* JsonValue::Find(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<int64_t> JsonValue::AsInt64() const {
  if (type != Type::kNumber) return std::nullopt;
  int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return v;
  // (The range first: converting a double past int64_t's range is undefined.)
  if (number > -9.2e18 && number < 9.2e18 &&
      number == static_cast<double>(static_cast<int64_t>(number))) {
    return static_cast<int64_t>(number);
  }
  return std::nullopt;
}

namespace {

// Depth-limited, so that a hostile file of nested brackets cannot exhaust the stack.
constexpr int kMaxDepth = 256;

bool Read(JsonReader& r, JsonValue* v, int depth) {
  if (depth > kMaxDepth) return r.Fail("JSON nested deeper than 256 levels");
  switch (r.Peek()) {
    case JsonReader::Type::kObject: {
      v->type = JsonValue::Type::kObject;
      if (!r.EnterObject()) return false;
      std::string_view key;
      while (r.NextKey(&key)) {
        v->members.emplace_back(std::string(key), JsonValue());
        if (!Read(r, &v->members.back().second, depth + 1)) return false;
      }
      return r.ok();
    }
    case JsonReader::Type::kArray: {
      v->type = JsonValue::Type::kArray;
      if (!r.EnterArray()) return false;
      while (r.NextElement()) {
        v->items.emplace_back();
        if (!Read(r, &v->items.back(), depth + 1)) return false;
      }
      return r.ok();
    }
    case JsonReader::Type::kString:
      v->type = JsonValue::Type::kString;
      return r.ReadString(&v->text);
    case JsonReader::Type::kBool:
      v->type = JsonValue::Type::kBool;
      return r.ReadBool(&v->boolean);
    case JsonReader::Type::kNull:
      v->type = JsonValue::Type::kNull;
      return r.Skip();
    case JsonReader::Type::kNumber: {
      v->type = JsonValue::Type::kNumber;
      std::string_view t;
      if (!r.ReadNumberText(&t)) return false;
      v->text.assign(t.data(), t.size());
      std::from_chars(t.data(), t.data() + t.size(), v->number);
      return true;
    }
    case JsonReader::Type::kEnd:
      return r.Fail("the text ends where a value was expected (is the file truncated?)");
    case JsonReader::Type::kError:
      return false;
  }
  return false;
}

}  // namespace

StatusOr<JsonValue> ParseJson(std::string_view text, const std::string& file) {
  JsonReader r(text, file);
  JsonValue v;
  if (!Read(r, &v, 0)) return r.status();
  if (!r.AtEnd()) {
    r.Fail("text follows the end of the JSON document");
    return r.status();
  }
  return v;
}

}  // namespace profile
}  // namespace orrery
