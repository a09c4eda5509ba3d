#include "config/schema.h"

#include <cstdint>

#include "config/test_files.h"
#include "gtest/gtest.h"

namespace orrery {
namespace {

struct Knobs {
  int splits = 1;
  double delay_ns = 10;
  bool fast = false;
  std::string policy = "LIFO";
  std::string name;
  std::vector<std::string> algos;
  std::vector<double> sizes;
  uint64_t big = 0;
};

Schema<Knobs> MakeKnobs() {
  Schema<Knobs> s;
  s.Integer("splits", &Knobs::splits).Min(1).Help("chunks");
  s.Number("delay", &Knobs::delay_ns).Unit("ns").Min(0).Help("delay");
  s.Bool("fast", &Knobs::fast).Help("go fast");
  s.Enum("policy", &Knobs::policy, {"LIFO", "FIFO"}).Help("order");
  s.String("name", &Knobs::name).Help("a name");
  s.StringList("algos", &Knobs::algos).ExactLength(2).Allowed({"ring", "direct"}).Help("algos");
  s.NumberList("sizes", &Knobs::sizes).Integral().Greater(1).MinLength(1).Help("sizes");
  s.Integer("big", &Knobs::big).Help("unsigned");
  return s;
}

// Parses `text` as file "k.yml" and applies the schema; returns the status.
Status ApplyText(const std::string& text, Knobs* k) {
  StatusOr<ConfigFile> f = ConfigFile::Parse(text, "k.yml");
  if (!f.ok()) return f.status();
  return MakeKnobs().Apply(*f, k);
}

TEST(SchemaTest, AbsentKeysKeepStructDefaults) {
  Knobs k;
  ASSERT_TRUE(ApplyText("name: x", &k).ok());
  EXPECT_EQ(k.splits, 1);
  EXPECT_EQ(k.delay_ns, 10);
  EXPECT_FALSE(k.fast);
  EXPECT_EQ(k.policy, "LIFO");
  EXPECT_EQ(k.name, "x");
}

TEST(SchemaTest, ReadsEveryTypeFromJson) {
  Knobs k;
  const Status s = ApplyText(
      R"({"splits": 4, "delay": 2.5, "fast": 1, "policy": "FIFO", "name": "n",
          "algos": ["ring", "direct"], "sizes": [2, 8.0], "big": 5000000000})",
      &k);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(k.splits, 4);
  EXPECT_DOUBLE_EQ(k.delay_ns, 2.5);
  EXPECT_TRUE(k.fast);
  EXPECT_EQ(k.policy, "FIFO");
  EXPECT_EQ(k.algos, (std::vector<std::string>{"ring", "direct"}));
  EXPECT_EQ(k.sizes, (std::vector<double>{2, 8}));
  EXPECT_EQ(k.big, 5000000000u);
}

TEST(SchemaTest, BoolAcceptsZeroOneTrueFalseOnly) {
  Knobs k;
  ASSERT_TRUE(ApplyText("fast: true", &k).ok());
  EXPECT_TRUE(k.fast);
  ASSERT_TRUE(ApplyText("fast: 0", &k).ok());
  EXPECT_FALSE(k.fast);
  const Status s = ApplyText("fast: 2", &k);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("k.yml:1: key 'fast' is '2'; expected 0, 1, true or false"),
            std::string::npos)
      << s.message();
}

TEST(SchemaTest, UnknownKeySuggestsTheClosestName) {
  Knobs k;
  const Status s = ApplyText("splits: 2\ndelya: 3\n", &k);
  ASSERT_EQ(s.problems().size(), 1u) << s.message();
  EXPECT_EQ(s.problems()[0], "k.yml:2: unknown key 'delya' (did you mean 'delay'?)");
}

TEST(SchemaTest, UnknownKeyWithNothingCloseListsValidKeys) {
  Knobs k;
  const Status s = ApplyText("zzzzzzzzzzzz: 3\n", &k);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("valid keys: splits, delay, fast"), std::string::npos) << s.message();
}

TEST(SchemaTest, WrongTypesAreErrors) {
  Knobs k;
  // A word, a quoted number, a list where a number belongs; a scalar where a list belongs.
  const Status s = ApplyText("splits: many\ndelay: \"10\"\nbig: [1]\nalgos: ring\nname: [a]\n", &k);
  ASSERT_EQ(s.problems().size(), 5u) << s.message();
  EXPECT_EQ(s.problems()[0], "k.yml:1: key 'splits' is 'many'; expected an integer >= 1");
  EXPECT_EQ(s.problems()[1],
            "k.yml:2: key 'delay' is '10'; expected a number >= 0 (ns), written without quotes");
  EXPECT_EQ(s.problems()[2], "k.yml:3: key 'big' is a list; expected an integer >= 0");
  EXPECT_NE(s.problems()[3].find("k.yml:4: key 'algos' is 'ring'; expected a list of each one "
                                 "of ring, direct with exactly 2 entries"),
            std::string::npos)
      << s.problems()[3];
  EXPECT_EQ(s.problems()[4], "k.yml:5: key 'name' is a list; expected a string");
}

TEST(SchemaTest, RangesAndIntegersAreChecked) {
  Knobs k;
  const Status s = ApplyText("splits: 0\ndelay: -1\nsizes: [2, 1, 2.5]\nbig: -4\n", &k);
  ASSERT_EQ(s.problems().size(), 5u) << s.message();
  EXPECT_EQ(s.problems()[0], "k.yml:1: key 'splits' is '0'; expected an integer >= 1");
  EXPECT_EQ(s.problems()[1], "k.yml:2: key 'delay' is '-1'; expected a number >= 0 (ns)");
  EXPECT_EQ(s.problems()[2], "k.yml:3: key 'sizes', item 2, is '1'; expected an integer > 1");
  EXPECT_EQ(s.problems()[3], "k.yml:3: key 'sizes', item 3, is '2.5'; expected an integer > 1");
  EXPECT_EQ(s.problems()[4], "k.yml:4: key 'big' is '-4'; expected an integer >= 0");
}

TEST(SchemaTest, IntegerMustFitItsField) {
  Knobs k;
  const Status s = ApplyText("splits: 3000000000\n", &k);  // > INT_MAX = 2147483647
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("at most 2147483647"), std::string::npos) << s.message();
}

// An integer written in digits is read exactly, whatever its size: a double holds every whole
// number only up to 2^53 (2^53 + 1 would come out as 2^53, UINT64_MAX as 2^64), so digits are
// never read through one.
TEST(SchemaTest, Unsigned64BitFieldReadsDigitsExactlyUpToItsMaximum) {
  Knobs k;
  ASSERT_TRUE(ApplyText("big: 9007199254740993\n", &k).ok());
  EXPECT_EQ(k.big, 9007199254740993u);
  ASSERT_TRUE(ApplyText("big: 18446744073709551615\n", &k).ok());
  EXPECT_EQ(k.big, UINT64_MAX);
  ASSERT_TRUE(ApplyText("big: +0018446744073709551614\n", &k).ok());
  EXPECT_EQ(k.big, UINT64_MAX - 1);
  for (const char* bad : {"18446744073709551616", "99999999999999999999999"}) {
    const Status s = ApplyText(std::string("big: ") + bad + "\n", &k);
    ASSERT_EQ(s.problems().size(), 1u) << bad;
    EXPECT_EQ(s.problems()[0], std::string("k.yml:1: key 'big' is '") + bad +
                                   "'; expected an integer >= 0 (at most 18446744073709551615)");
  }
}

// Other spellings of a number (1e3, 0x10, 1.0) are read as a double: exact up to 2^53, past
// which they must be written in digits instead of being rounded silently.
TEST(SchemaTest, IntegerNotInDigitsPastTwoToThe53IsRefusedNotRounded) {
  Knobs k;
  ASSERT_TRUE(ApplyText("big: 1e15\n", &k).ok());
  EXPECT_EQ(k.big, 1000000000000000u);
  ASSERT_TRUE(ApplyText("big: 0x1fffffffffffff\n", &k).ok());  // 2^53 - 1
  EXPECT_EQ(k.big, 9007199254740991u);
  ASSERT_TRUE(ApplyText("big: 4096.0\n", &k).ok());
  EXPECT_EQ(k.big, 4096u);
  // 2^53 + 1 reads as 2^53, so 2^53 itself is refused in this form too.
  for (const char* bad : {"1e19", "0x20000000000001", "0x20000000000000", "9007199254740993.0"}) {
    const Status s = ApplyText(std::string("big: ") + bad + "\n", &k);
    ASSERT_EQ(s.problems().size(), 1u) << bad;
    EXPECT_EQ(s.problems()[0],
              std::string("k.yml:1: key 'big' is '") + bad +
                  "'; expected an integer >= 0 (at most 18446744073709551615), "
                  "written in digits from 2^53 (9007199254740992) on, to be exact");
  }
}

struct Signed64 {
  int64_t offset = 0;
};

// int64_t: [-2^63, 2^63 - 1], both ends exactly.
TEST(SchemaTest, Signed64BitFieldStaysInsideItsRange) {
  Schema<Signed64> schema;
  schema.Integer("offset", &Signed64::offset).Help("offset");
  auto apply = [&](const std::string& text, Signed64* out) {
    StatusOr<ConfigFile> f = ConfigFile::Parse(text, "s.yml");
    return f.ok() ? schema.Apply(*f, out) : f.status();
  };
  Signed64 v;
  ASSERT_TRUE(apply("offset: -9223372036854775808", &v).ok());
  EXPECT_EQ(v.offset, INT64_MIN);
  ASSERT_TRUE(apply("offset: 9223372036854775807", &v).ok());
  EXPECT_EQ(v.offset, INT64_MAX);
  ASSERT_TRUE(apply("offset: -9007199254740993", &v).ok());
  EXPECT_EQ(v.offset, int64_t{-9007199254740993});
  ASSERT_TRUE(apply("offset: -0", &v).ok());
  EXPECT_EQ(v.offset, 0);
  EXPECT_EQ(apply("offset: 9223372036854775808", &v).message(),
            "s.yml:1: key 'offset' is '9223372036854775808'; expected an integer (at most "
            "9223372036854775807)");
  EXPECT_EQ(apply("offset: -9223372036854775809", &v).message(),
            "s.yml:1: key 'offset' is '-9223372036854775809'; expected an integer (at least "
            "-9223372036854775808)");
  EXPECT_EQ(apply("offset: -1e19", &v).message(),
            "s.yml:1: key 'offset' is '-1e19'; expected an integer (from -9223372036854775808 to "
            "9223372036854775807), written in digits from 2^53 (9007199254740992) on, to be exact");
}

// A fraction that the double reading rounds to a whole number is still a fraction.
TEST(SchemaTest, AFractionRoundedToAWholeDoubleIsNotAnInteger) {
  Knobs k;
  const Status s = ApplyText("big: 2251799813685248.9\n", &k);
  ASSERT_EQ(s.problems().size(), 1u);
  EXPECT_EQ(s.problems()[0],
            "k.yml:1: key 'big' is '2251799813685248.9'; expected an integer >= 0");
  ASSERT_TRUE(ApplyText("big: 12.000\n", &k).ok());
  EXPECT_EQ(k.big, 12u);
}

// --print-config writes an integer field back exactly (not through a double's 15 digits).
TEST(SchemaTest, IntegerFieldsAreWrittenBackExactly) {
  Knobs k;
  ASSERT_TRUE(ApplyText("big: 18446744073709551615\n", &k).ok());
  Schema<Knobs> schema;
  schema.Integer("big", &Knobs::big).Help("unsigned");
  EXPECT_EQ(FlowYaml(schema.ToYaml(k)), "{big: 18446744073709551615}");
}

TEST(SchemaTest, NumbersTooSmallOrLargeForADoubleSaySo) {
  Knobs k;
  const Status s = ApplyText("delay: 1e-320\nsizes: [1e400]\n", &k);
  ASSERT_EQ(s.problems().size(), 2u) << s.message();
  EXPECT_EQ(s.problems()[0],
            "k.yml:1: key 'delay' is '1e-320', which is too close to 0 to hold (nonzero "
            "magnitudes below 2.2e-308); expected a number >= 0 (ns)");
  EXPECT_EQ(s.problems()[1],
            "k.yml:2: key 'sizes', item 1, is '1e400', which is too large to hold (above "
            "1.8e308); expected an integer > 1");
  ASSERT_TRUE(ApplyText("delay: 2.3e-308\n", &k).ok());
  EXPECT_EQ(k.delay_ns, 2.3e-308);
}

TEST(SchemaTest, StrTaggedNumbersAndBoolsAreStrings) {
  Knobs k;
  const Status s = ApplyText("delay: !!str 1600\nfast: !!str 1\nsplits: !!int 3\n", &k);
  ASSERT_EQ(s.problems().size(), 2u) << s.message();
  EXPECT_EQ(s.problems()[0],
            "k.yml:1: key 'delay' is '1600'; expected a number >= 0 (ns), written without !!str");
  EXPECT_EQ(s.problems()[1], "k.yml:2: key 'fast' is '1'; expected 0, 1, true or false");
  EXPECT_EQ(k.splits, 3);
}

TEST(SchemaTest, MergeKeysAreNotSupported) {
  Knobs k;
  const Status s = ApplyText("base: &b {splits: 2}\n<<: *b\n", &k);
  ASSERT_EQ(s.problems().size(), 2u) << s.message();
  EXPECT_NE(s.problems()[0].find("unknown key 'base'"), std::string::npos) << s.problems()[0];
  EXPECT_EQ(s.problems()[1],
            "k.yml:2: '<<' is a YAML merge key, which is not supported; expected the keys "
            "written out in full");
}

TEST(SchemaTest, NonFiniteNumbersAreRejected) {
  Knobs k;
  EXPECT_FALSE(ApplyText("delay: .inf\n", &k).ok());
  EXPECT_FALSE(ApplyText("delay: nan\n", &k).ok());
}

TEST(SchemaTest, BadEnumListsValuesAndSuggests) {
  Knobs k;
  const Status s = ApplyText("policy: lifo\nalgos: [rign, direct]\n", &k);
  ASSERT_EQ(s.problems().size(), 2u) << s.message();
  EXPECT_EQ(s.problems()[0],
            "k.yml:1: key 'policy' is 'lifo'; expected one of LIFO, FIFO (did you mean 'LIFO'?)");
  EXPECT_EQ(s.problems()[1],
            "k.yml:2: key 'algos', item 1, is 'rign'; expected one of ring, "
            "direct (did you mean 'ring'?)");
}

TEST(SchemaTest, ListLengthIsChecked) {
  Knobs k;
  const Status s = ApplyText("algos: [ring]\nsizes: []\n", &k);
  ASSERT_EQ(s.problems().size(), 2u) << s.message();
  EXPECT_NE(s.problems()[0].find("key 'algos' is a list of 1 entry; expected a list of each one "
                                 "of ring, direct with exactly 2 entries"),
            std::string::npos)
      << s.problems()[0];
  EXPECT_NE(s.problems()[1].find("with at least 1 entry"), std::string::npos);
}

TEST(SchemaTest, RepeatedKeyIsAnError) {
  Knobs k;
  const Status s = ApplyText("splits: 2\nsplits: 3\n", &k);
  ASSERT_EQ(s.problems().size(), 1u);
  EXPECT_EQ(s.problems()[0], "k.yml:2: key 'splits' appears more than once");
}

TEST(SchemaTest, RequiredKeyMissing) {
  Schema<Knobs> s;
  s.Integer("splits", &Knobs::splits).Required().Min(1);
  StatusOr<ConfigFile> f = ConfigFile::Parse("{}", "r.json");
  // "{}" is an empty map, which is a valid (if useless) top level.
  ASSERT_TRUE(f.ok()) << f.status().message();
  Knobs k;
  const Status st = s.Apply(*f, &k);
  ASSERT_EQ(st.problems().size(), 1u);
  EXPECT_EQ(st.problems()[0], "r.json: required key 'splits' is missing; expected an integer >= 1");
}

// A map inside a larger file (an entry of a list or map) names itself after the place in every
// message: a bad value, an unknown key and a missing required key alike.
TEST(SchemaTest, ContextFollowsThePlaceInEveryMessage) {
  Schema<Knobs> s;
  s.Integer("splits", &Knobs::splits).Required().Min(1);
  s.Number("delay", &Knobs::delay_ns).Min(0);
  StatusOr<ConfigFile> f = ConfigFile::Parse("delay: -1\ndelya: 2\n", "c.yml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  f->SetContext("entry ring");
  Knobs k;
  const Status st = s.Apply(*f, &k);
  ASSERT_EQ(st.problems().size(), 3u) << st.message();
  EXPECT_EQ(st.problems()[0].rfind("c.yml:1: entry ring: key 'delay' is '-1'", 0), 0u)
      << st.problems()[0];
  EXPECT_EQ(st.problems()[1].rfind("c.yml:2: entry ring: unknown key 'delya'", 0), 0u)
      << st.problems()[1];
  EXPECT_EQ(st.problems()[2],
            "c.yml: entry ring: required key 'splits' is missing; expected an integer >= 1");
}

TEST(SchemaTest, AllProblemsAreReportedTogether) {
  Knobs k;
  const Status s = ApplyText("splits: -1\ndelay: x\nfast: maybe\npolicy: LILO\nspilts: 3\n", &k);
  EXPECT_EQ(s.problems().size(), 5u) << s.message();
}

TEST(SchemaTest, ApplyReportsValidKeys) {
  Knobs k;
  std::set<std::string> valid;
  StatusOr<ConfigFile> f = ConfigFile::Parse("splits: 2\ndelay: -1\n", "v.yml");
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(MakeKnobs().Apply(*f, &k, &valid).ok());
  EXPECT_EQ(valid, (std::set<std::string>{"splits"}));
  EXPECT_EQ(k.splits, 2);
  EXPECT_EQ(k.delay_ns, 10);  // the bad value is not applied
}

TEST(ConfigFileTest, UnparsableYamlGivesLineAndColumn) {
  const std::string path = WriteTestFile("broken.json", "{\n  \"a\": [1, 2,\n  \"b\": 3\n");
  StatusOr<ConfigFile> f = ConfigFile::Read(path);
  ASSERT_FALSE(f.ok());
  ASSERT_EQ(f.status().problems().size(), 1u);
  const std::string& m = f.status().problems()[0];
  EXPECT_EQ(m.rfind(path + ":", 0), 0u) << m;
  EXPECT_NE(m.find("not valid YAML/JSON"), std::string::npos) << m;
  // The message carries "path:<line>:<column>:" with a line inside the 3-line file.
  const size_t colon = path.size() + 1;
  const int line = std::atoi(m.c_str() + colon);
  EXPECT_GE(line, 2);
  EXPECT_LE(line, 4);
}

TEST(ConfigFileTest, MissingFileIsNamed) {
  const std::string path = ::testing::TempDir() + "/does_not_exist.yml";
  StatusOr<ConfigFile> f = ConfigFile::Read(path);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), path + ": cannot open the file (No such file or directory)");
}

TEST(ConfigFileTest, DirectoryIsNotAFile) {
  StatusOr<ConfigFile> f = ConfigFile::Read(::testing::TempDir());
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("is a directory"), std::string::npos);
}

TEST(ConfigFileTest, EmptyFileAndNonMapTopLevelAreErrors) {
  StatusOr<ConfigFile> empty = ConfigFile::Read(WriteTestFile("empty.yml", "# nothing\n"));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("the file is empty"), std::string::npos);
  StatusOr<ConfigFile> list = ConfigFile::Parse("[1, 2]", "l.yml");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().message(),
            "l.yml:1: the top level is a list; expected a map of 'key: value' pairs (a JSON "
            "object)");
  StatusOr<ConfigFile> scalar = ConfigFile::Parse("hello", "s.yml");
  ASSERT_FALSE(scalar.ok());
  EXPECT_NE(scalar.status().message().find("single value 'hello'"), std::string::npos);
}

// YAML::Load kept the first document and dropped the rest without a word.
TEST(ConfigFileTest, ASecondDocumentIsAnError) {
  const struct {
    const char* text;
    const char* message;
  } kCases[] = {
      {"{\"splits\": 2}\n{\"delay\": 5000}\n", "d.yml:2: a second YAML document (a map)"},
      {"{\"splits\": 2} xyz\n", "d.yml:1: a second YAML document ('xyz')"},
      {"splits: 2\n...\n---\ndelay: 5000\n", "d.yml:4: a second YAML document (a map)"},
      {"splits: 2\n---\n- 1\n", "d.yml:3: a second YAML document (a list)"},
  };
  for (const auto& c : kCases) {
    StatusOr<ConfigFile> f = ConfigFile::Parse(c.text, "d.yml");
    ASSERT_FALSE(f.ok()) << c.text;
    EXPECT_EQ(f.status().message(),
              std::string(c.message) +
                  " starts here; expected one document per file (a second one, after '---' or "
                  "after the first one's closing bracket, would not be read)");
  }
  // A leading '---', a closing '...' and an empty document after the first hold nothing more.
  for (const char* ok : {"---\nsplits: 2\n", "splits: 2\n...\n", "splits: 2\n---\n",
                         "splits: 2\n---\n# nothing\n"}) {
    StatusOr<ConfigFile> f = ConfigFile::Parse(ok, "d.yml");
    ASSERT_TRUE(f.ok()) << ok << ": " << f.status().message();
    EXPECT_EQ(f->Get("splits").Scalar(), "2");
  }
  StatusOr<YAML::Node> two = ReadYamlDocument(WriteTestFile("two.yml", "a: 1\n---\nb: 2\n"));
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("two.yml:3: a second YAML document"), std::string::npos)
      << two.status().message();
}

TEST(ConfigFileTest, WhereGivesOneBasedLines) {
  StatusOr<ConfigFile> f = ConfigFile::Parse("a: 1\n\nb: 2\n", "w.yml");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->WhereKey("b"), "w.yml:3");
  EXPECT_EQ(f->WhereKey("zz"), "w.yml");
  EXPECT_TRUE(f->Has("a"));
  EXPECT_FALSE(f->Has("c"));
  EXPECT_EQ(f->Get("b").Scalar(), "2");
}

TEST(SchemaDocsTest, DocsCarryTypeUnitDefaultAndRange) {
  const std::vector<KeyDoc> docs = MakeKnobs().Docs();
  ASSERT_EQ(docs.size(), 8u);
  EXPECT_EQ(docs[0].name, "splits");
  EXPECT_EQ(docs[0].type, "int");
  EXPECT_EQ(docs[0].default_value, "1");
  EXPECT_EQ(docs[0].allowed, ">= 1");
  EXPECT_EQ(docs[1].unit, "ns");
  EXPECT_EQ(docs[1].default_value, "10");
  EXPECT_EQ(docs[2].default_value, "0");
  EXPECT_EQ(docs[3].allowed, "LIFO, FIFO");
  EXPECT_EQ(docs[3].default_value, "LIFO");
  EXPECT_EQ(docs[5].allowed, "ring, direct; exactly 2 entries");
  EXPECT_EQ(docs[6].type, "list of ints");
  EXPECT_EQ(docs[6].allowed, "> 1");
}

TEST(FormatNumberTest, ShortestText) {
  EXPECT_EQ(FormatNumber(10), "10");
  EXPECT_EQ(FormatNumber(936.25), "936.25");
  EXPECT_EQ(FormatNumber(-3), "-3");
}

// Below(v): an exclusive upper bound; v itself is refused, the largest double under it is not.
TEST(SchemaTest, BelowIsAnExclusiveMaximum) {
  struct Lat {
    double us = 0;
  };
  Schema<Lat> s;
  s.Number("latency", &Lat::us).Unit("us").Min(0).Below(1e9).Help("latency");
  auto apply = [&](const std::string& text, Lat* l) {
    StatusOr<ConfigFile> f = ConfigFile::Parse(text, "l.yml");
    return f.ok() ? s.Apply(*f, l) : f.status();
  };
  Lat l;
  ASSERT_TRUE(apply("latency: 999999999.5", &l).ok());
  EXPECT_DOUBLE_EQ(l.us, 999999999.5);
  const Status at = apply("latency: 1e9", &l);
  ASSERT_FALSE(at.ok());
  EXPECT_NE(at.message().find("l.yml:1: key 'latency' is '1e9'; expected a number in [0, "
                              "1000000000) (us)"),
            std::string::npos)
      << at.message();
  EXPECT_EQ(s.keys()[0].Doc().allowed, "in [0, 1000000000)");
  KeySpec only;
  only.Below(5);
  EXPECT_EQ(only.Expected(), "a number < 5");
}

}  // namespace
}  // namespace orrery
