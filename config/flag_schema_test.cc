// FlagSchema's repeated flags: given once per value (or positionally), items kept whole.
#include "config/flag_schema.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/flags.h"

namespace orrery {
namespace {

namespace po = boost::program_options;

struct Files {
  std::vector<std::string> inputs;
  std::string out;
  int count = 3;
};

const FlagSchema<Files>& FilesSchema() {
  static const FlagSchema<Files>* schema = [] {
    auto* s = new FlagSchema<Files>();
    s->Repeated("input", &Files::inputs).Help("an input");
    s->String("out", &Files::out).Help("the output");
    s->Integer("count", &Files::count).Min(1).Max(9).Help("how many");
    return s;
  }();
  return *schema;
}

// Parses argv (argv[0] is the command) with "input" also positional; the Status of Apply.
Status Parse(std::vector<const char*> argv, Files* out) {
  po::options_description desc("test");
  FilesSchema().AddTo(&desc);
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  po::store(ParseFlags(static_cast<int>(argv.size()), argv.data(), desc, &positional), vm);
  po::notify(vm);
  return FilesSchema().Apply(vm, out);
}

TEST(FlagSchemaRepeated, EachOccurrenceIsOneItemAndCommasStay) {
  Files f;
  ASSERT_TRUE(Parse({"cmd", "--input", "a,b.json", "--input", "c.json", "--out", "o"}, &f).ok());
  EXPECT_EQ(f.inputs, (std::vector<std::string>{"a,b.json", "c.json"}));
  EXPECT_EQ(f.out, "o");
  EXPECT_EQ(f.count, 3);  // not given: the struct's default
}

TEST(FlagSchemaRepeated, PositionalArgumentsFillTheRepeatedFlag) {
  Files f;
  ASSERT_TRUE(Parse({"cmd", "x.json", "y.json", "--count", "2"}, &f).ok());
  EXPECT_EQ(f.inputs, (std::vector<std::string>{"x.json", "y.json"}));
  EXPECT_EQ(f.count, 2);
}

TEST(FlagSchemaRepeated, NotGivenKeepsTheDefaultAndOtherFlagsAreStillChecked) {
  Files f;
  const Status s = Parse({"cmd", "--count", "10"}, &f);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "--count is '10'; expected an integer in [1, 9]");
  EXPECT_TRUE(f.inputs.empty());
}

TEST(FlagSchemaRepeated, DocsSayToRepeatTheFlag) {
  const std::vector<KeyDoc> docs = FilesSchema().Docs();
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].name, "input");
  EXPECT_EQ(docs[0].allowed, "repeat the flag, one value each");
  EXPECT_NE(docs[1].allowed, "repeat the flag, one value each");
}

}  // namespace
}  // namespace orrery
