// The one parser of byte counts in environment variables (env/byte_count.h): digits with an optional
// K/M/G suffix, everything else refused with a message naming the variable, its value and the syntax.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "env/byte_count.h"

namespace mcrp::env {
namespace {

std::optional<std::uint64_t> parse(const char* text, std::uint64_t max = kNoByteLimit) {
  std::string why;
  std::optional<std::uint64_t> bytes = parse_byte_count(text, max, &why);
  EXPECT_EQ(bytes.has_value(), why.empty()) << text << ": " << why;
  return bytes;
}

std::string problem_with(const char* text, std::uint64_t max = kNoByteLimit) {
  std::string why;
  EXPECT_FALSE(parse_byte_count(text, max, &why).has_value()) << "accepted: " << text;
  return why;
}

TEST(ByteCount, PlainDigits) {
  EXPECT_EQ(parse("0"), 0u);
  EXPECT_EQ(parse("1"), 1u);
  EXPECT_EQ(parse("65536"), 65536u);
  EXPECT_EQ(parse("007"), 7u);
  EXPECT_EQ(parse("18446744073709551615"), kNoByteLimit);
}

TEST(ByteCount, SuffixesArePowersOf1024InEitherCase) {
  EXPECT_EQ(parse("64K"), 65536u);
  EXPECT_EQ(parse("64k"), 65536u);
  EXPECT_EQ(parse("1M"), 1u << 20);
  EXPECT_EQ(parse("3m"), 3u << 20);
  EXPECT_EQ(parse("2G"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse("0g"), 0u);
}

TEST(ByteCount, AnythingElseIsRefusedWithTheSyntax) {
  for (const char* bad : {"", "K", "abc", "-1", "+5", " 5", "5 ", "1.5M", "64KB", "64KiB", "1T", "0x10", "5KK", "1e6"}) {
    EXPECT_NE(problem_with(bad).find("expected digits with an optional K, M or G suffix"), std::string::npos) << bad;
  }
}

TEST(ByteCount, OverflowIsRefused) {
  EXPECT_NE(problem_with("18446744073709551616").find("more than the largest accepted value"), std::string::npos);
  EXPECT_NE(problem_with("99999999999999999999999").find("more than the largest"), std::string::npos);
  // 2^34 G = 2^64: overflows only once scaled.
  EXPECT_NE(problem_with("17179869184G").find("more than the largest"), std::string::npos);
  EXPECT_EQ(parse("17179869183G"), std::uint64_t{17179869183} << 30);
}

TEST(ByteCount, TheCallersMaximumIsInclusive) {
  EXPECT_EQ(parse("1G", std::uint64_t{1} << 30), std::uint64_t{1} << 30);
  EXPECT_NE(problem_with("1073741825", std::uint64_t{1} << 30).find("more than the largest accepted value, 1073741824 bytes"),
            std::string::npos);
  EXPECT_NE(problem_with("2G", std::uint64_t{1} << 30).find("1073741824"), std::string::npos);
}

TEST(ByteCount, FromTheEnvironment) {
  const char* name = "MCRPMPI_TEST_BYTE_COUNT";
  unsetenv(name);
  ByteCountSetting unset = byte_count_from_env(name);
  EXPECT_FALSE(unset.bytes);
  EXPECT_TRUE(unset.problem.empty());
  setenv(name, "", 1);
  EXPECT_FALSE(byte_count_from_env(name).bytes);
  EXPECT_TRUE(byte_count_from_env(name).problem.empty());
  setenv(name, "8K", 1);
  EXPECT_EQ(byte_count_from_env(name).bytes, 8192u);
  setenv(name, "lots", 1);
  ByteCountSetting bad = byte_count_from_env(name);
  EXPECT_FALSE(bad.bytes);
  EXPECT_NE(bad.problem.find("ignoring MCRPMPI_TEST_BYTE_COUNT=lots (expected digits"), std::string::npos) << bad.problem;
  setenv(name, "5000", 1);
  ByteCountSetting too_large = byte_count_from_env(name, 4096);
  EXPECT_FALSE(too_large.bytes);
  EXPECT_NE(too_large.problem.find("ignoring MCRPMPI_TEST_BYTE_COUNT=5000 (more than the largest accepted value, 4096 bytes)"),
            std::string::npos)
      << too_large.problem;
  unsetenv(name);
}

}  // namespace
}  // namespace mcrp::env
