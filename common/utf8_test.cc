#include "common/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace orrery {
namespace {

TEST(Utf8, FirstBadByte) {
  EXPECT_EQ(FirstBadUtf8(""), 0u);
  EXPECT_EQ(FirstBadUtf8("plain"), 5u);
  EXPECT_EQ(FirstBadUtf8("caf\xc3\xa9"), 5u);       // é, two bytes
  EXPECT_EQ(FirstBadUtf8("\xe2\x82\xac!"), 4u);     // €, three bytes
  EXPECT_EQ(FirstBadUtf8("\xf0\x9f\x98\x80"), 4u);  // U+1F600, four bytes
  EXPECT_EQ(FirstBadUtf8("a\xff"), 1u);             // never a lead byte
  EXPECT_EQ(FirstBadUtf8("ab\x80"), 2u);            // a lone continuation byte
  EXPECT_EQ(FirstBadUtf8("ab\xc3"), 2u);            // cut short
  EXPECT_EQ(FirstBadUtf8("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(FirstBadUtf8("x\xed\xa0\x80"), 1u);     // a surrogate, U+D800
  EXPECT_EQ(FirstBadUtf8("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
}

TEST(Utf8, BadBytesBecomeTheReplacementCharacter) {
  EXPECT_EQ(ValidUtf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(ValidUtf8("a\xff"
                      "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(ValidUtf8("\xc3"), "\xef\xbf\xbd");
  // Each bad byte on its own; the valid sequences between them kept.
  EXPECT_EQ(ValidUtf8("\xff\xfe\xe2\x82\xac\x80"),
            "\xef\xbf\xbd\xef\xbf\xbd\xe2\x82\xac\xef\xbf\xbd");
  for (const std::string s : {"a\xff", "\xed\xa0\x80", "\xc0\xaf", "ok"}) {
    const std::string v = ValidUtf8(s);
    EXPECT_EQ(FirstBadUtf8(v), v.size()) << s;
  }
}

}  // namespace
}  // namespace orrery
