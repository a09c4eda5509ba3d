#include "common/json.h"

#include "gtest/gtest.h"

namespace orrery {
namespace {

TEST(Json, EscapesWhatJsonNeeds) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("a \"b\" \\ c"), "\"a \\\"b\\\" \\\\ c\"");
  EXPECT_EQ(JsonString("line\nnext\ttab"), "\"line\\nnext\\ttab\"");
  EXPECT_EQ(JsonString(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(JsonString("µs"), "\"µs\"");  // UTF-8 passes through
  std::string out = "x: ";
  AppendJsonString(&out, "");
  EXPECT_EQ(out, "x: \"\"");
}

}  // namespace
}  // namespace orrery
