#include "profile/json_reader.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "profile/json_value.h"

namespace orrery {
namespace profile {
namespace {

TEST(JsonReader, ReadsObjectsArraysAndScalars) {
  const std::string text = R"( {"a": 1, "b": [true, false, null, "x\"y\\n"], "c": {"d": -2.5e3}} )";
  JsonReader r(text, "t.json");
  ASSERT_TRUE(r.EnterObject());
  std::string_view key;
  ASSERT_TRUE(r.NextKey(&key));
  EXPECT_EQ(key, "a");
  int64_t a = 0;
  ASSERT_TRUE(r.ReadInt64(&a));
  EXPECT_EQ(a, 1);
  ASSERT_TRUE(r.NextKey(&key));
  EXPECT_EQ(key, "b");
  ASSERT_TRUE(r.EnterArray());
  bool b = false;
  ASSERT_TRUE(r.NextElement());
  ASSERT_TRUE(r.ReadBool(&b));
  EXPECT_TRUE(b);
  ASSERT_TRUE(r.NextElement());
  ASSERT_TRUE(r.ReadBool(&b));
  EXPECT_FALSE(b);
  ASSERT_TRUE(r.NextElement());
  EXPECT_EQ(r.Peek(), JsonReader::Type::kNull);
  ASSERT_TRUE(r.Skip());
  ASSERT_TRUE(r.NextElement());
  std::string s;
  ASSERT_TRUE(r.ReadString(&s));
  EXPECT_EQ(s, "x\"y\\n");
  EXPECT_FALSE(r.NextElement());
  ASSERT_TRUE(r.NextKey(&key));
  EXPECT_EQ(key, "c");
  ASSERT_TRUE(r.Skip());
  EXPECT_FALSE(r.NextKey(&key));
  EXPECT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r.AtEnd());
}

// Microseconds to nanoseconds from the decimal digits: a double holds ~16 significant digits,
// and a Kineto timestamp with three decimals has 19.
TEST(JsonReader, MicrosecondsAreReadExactlyAsNanoseconds) {
  struct Case {
    const char* text;
    int64_t ns;
  } cases[] = {
      {"1712195495519689.125", 1712195495519689125},  // a double would give ...689125 ± 128
      {"4458676522690.655", 4458676522690655},
      {"63.813", 63813},
      {"12", 12000},
      {"0.0004", 0},  // below half a nanosecond
      {"0.0005", 1},  // half rounds away from zero
      {"1.9999", 2000},
      {"-2.5", -2500},
      {"1e3", 1000000},  // an exponent: through a double
  };
  for (const Case& c : cases) {
    JsonReader r(c.text, "t");
    int64_t ns = 0;
    ASSERT_TRUE(r.ReadMicrosAsNanos(&ns)) << c.text << ": " << r.status().message();
    EXPECT_EQ(ns, c.ns) << c.text;
  }
}

TEST(JsonReader, ErrorsNameTheFileTheByteAndWhatWasExpected) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"{\"a\": 1 \"b\": 2}", "t.json: byte 8 (line 1): expected ',' or '}' after a member"},
      {"{\"a\": \"never closed}", "a string is never closed (is the file truncated?)"},
      {"[1, 2", "the text ends inside an array (is the file truncated?)"},
      {"{\"a\"\n 1}", "t.json: byte 6 (line 2): expected ':' after a key, found '1'"},
      {"{\"a\": tru}", "expected a value (object, array, string, number, true, false or null)"},
      {"{\"a\": 01}", "found '0'"},
  };
  for (const Case& c : cases) {
    StatusOr<JsonValue> v = ParseJson(c.text, "t.json");
    ASSERT_FALSE(v.ok()) << c.text;
    EXPECT_NE(v.status().message().find(c.message), std::string::npos)
        << c.text << " gave: " << v.status().message();
  }
  StatusOr<JsonValue> v = ParseJson("{} x", "t.json");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("text follows the end of the JSON document"),
            std::string::npos);
}

// A whole number may be written 3.0 or 1e3; one past int64_t's range is an error, checked before
// any conversion (converting 3.3e33 to int64_t is undefined; found by the execution_trace fuzzer
// under UBSan).
TEST(JsonReader, WholeNumbersPastInt64AreAnErrorNotAConversion) {
  for (const char* text : {"3.33333e+33", "-1e19", "9.3e18"}) {
    JsonReader r(text, "t.json");
    int64_t v = 0;
    EXPECT_FALSE(r.ReadInt64(&v)) << text;
    EXPECT_NE(r.status().message().find(std::string("expected a whole number, found ") + text),
              std::string::npos)
        << r.status().message();
  }
  JsonReader r("1e3", "t.json");
  int64_t v = 0;
  ASSERT_TRUE(r.ReadInt64(&v));
  EXPECT_EQ(v, 1000);
  // The same for a parsed value's AsInt64 (6.5e85 was converted first; found by the
  // execution_trace fuzzer under UBSan).
  for (const char* text : {"6.55333e+85", "-6.5e85", "1e19"}) {
    StatusOr<JsonValue> j = ParseJson(text, "t.json");
    ASSERT_TRUE(j.ok()) << j.status().message();
    EXPECT_FALSE(j->AsInt64().has_value()) << text;
  }
  StatusOr<JsonValue> k = ParseJson("4096.0", "t.json");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->AsInt64(), std::optional<int64_t>(4096));
}

TEST(JsonReader, UnescapesUnicodeWithSurrogatePairs) {
  std::string out;
  ASSERT_TRUE(JsonReader::Unescape("a\\u00e9\\ud83d\\ude00\\t", &out));
  EXPECT_EQ(out, "a\xc3\xa9\xf0\x9f\x98\x80\t");
  EXPECT_FALSE(JsonReader::Unescape("\\x", &out));
  EXPECT_FALSE(JsonReader::Unescape("\\u12", &out));
}

// Skip and the tree reader agree on random documents: skipping every top-level member leaves the
// reader exactly where reading them does.
TEST(JsonReader, SkipAndReadAgreeOnRandomDocuments) {
  std::mt19937 rng(7);
  for (int doc = 0; doc < 200; ++doc) {
    std::string text;
    std::function<void(int)> value = [&](int depth) {
      switch (depth > 3 ? rng() % 4 : rng() % 6) {
        case 0:
          text += std::to_string(static_cast<int>(rng() % 2000) - 1000);
          break;
        case 1:
          text += "\"s\\\"" + std::to_string(rng() % 100) + "\\\\\"";
          break;
        case 2:
          text += rng() % 2 ? "true" : "null";
          break;
        case 3:
          text += "1.5e2";
          break;
        case 4: {
          text += "[";
          const int n = rng() % 4;
          for (int i = 0; i < n; ++i) {
            if (i) text += ", ";
            value(depth + 1);
          }
          text += "]";
          break;
        }
        default: {
          text += "{";
          const int n = rng() % 4;
          for (int i = 0; i < n; ++i) {
            text += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": ";
            value(depth + 1);
          }
          text += "}";
        }
      }
    };
    text = "{\"x\": ";
    value(0);
    text += ", \"y\": 1}";
    JsonReader skip(text, "t");
    ASSERT_TRUE(skip.EnterObject());
    std::string_view key;
    ASSERT_TRUE(skip.NextKey(&key));
    ASSERT_TRUE(skip.Skip()) << text << ": " << skip.status().message();
    ASSERT_TRUE(skip.NextKey(&key)) << text;
    EXPECT_EQ(key, "y");
    EXPECT_TRUE(ParseJson(text, "t").ok()) << text;
  }
}

}  // namespace
}  // namespace profile
}  // namespace orrery
