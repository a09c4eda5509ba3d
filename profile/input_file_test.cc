#include "profile/input_file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <string>

namespace orrery {
namespace profile {
namespace {

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// gzip of `text` (zlib's own compressor, gzip framing).
std::string Gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(&out[0]);
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void Spit(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

TEST(InputFile, PlainFilesAreReadAsTheyAre) {
  Spit(Tmp("plain.json"), "{\"traceEvents\": []}");
  StatusOr<std::string> t = ReadProfileFile(Tmp("plain.json"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(*t, "{\"traceEvents\": []}");
}

TEST(InputFile, GzipIsUnpackedWhateverTheName) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "{\"ts\": " + std::to_string(i) + "},";
  Spit(Tmp("a.json"), Gzip(text));  // named .json, compressed anyway
  StatusOr<std::string> t = ReadProfileFile(Tmp("a.json"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(*t, text);
}

TEST(InputFile, ConcatenatedMembersAreOneStream) {
  Spit(Tmp("two.json.gz"), Gzip("[1, ") + Gzip("2]"));
  StatusOr<std::string> t = ReadProfileFile(Tmp("two.json.gz"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(*t, "[1, 2]");
}

TEST(InputFile, TruncatedGzipIsAnErrorNamingTheFile) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"name\": \"kernel " + std::to_string(i) + "\"},";
  const std::string gz = Gzip(text);
  const std::string path = Tmp("cut.json.gz");
  Spit(path, gz.substr(0, gz.size() / 2));
  StatusOr<std::string> t = ReadProfileFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(path + ": truncated gzip: the compressed data ends after " +
                                      std::to_string(gz.size() / 2) + " bytes"),
            std::string::npos)
      << t.status().message();
}

TEST(InputFile, CorruptGzipAndMissingFilesAreErrors) {
  std::string gz = Gzip(std::string(5000, 'a') + "xyz");
  for (size_t i = 12; i < 30; ++i) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  Spit(Tmp("bad.json.gz"), gz);
  StatusOr<std::string> t = ReadProfileFile(Tmp("bad.json.gz"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("bad.json.gz"), std::string::npos);
  StatusOr<std::string> m = ReadProfileFile(Tmp("no_such_file.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("no_such_file.json: cannot open"), std::string::npos);
  StatusOr<std::string> d = ReadProfileFile(::testing::TempDir());
  ASSERT_FALSE(d.ok());
}

}  // namespace
}  // namespace profile
}  // namespace orrery
