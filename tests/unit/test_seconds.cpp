// The parser of durations in environment variables (env/seconds.h): decimal seconds with an optional
// fraction; everything else (what atof would have read as 0, "wait forever") refused with a message.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "env/seconds.h"

namespace mcrp::env {
namespace {

std::optional<double> parse(const char* text) {
  std::string why;
  std::optional<double> seconds = parse_seconds(text, &why);
  EXPECT_EQ(seconds.has_value(), why.empty()) << text << ": " << why;
  return seconds;
}

TEST(Seconds, WholeAndFractional) {
  EXPECT_EQ(parse("0"), 0.0);
  EXPECT_EQ(parse("600"), 600.0);
  EXPECT_EQ(parse("2.5"), 2.5);
  EXPECT_EQ(parse(".5"), 0.5);
  EXPECT_EQ(parse("3."), 3.0);
  EXPECT_EQ(parse("1000000000"), 1e9);
}

TEST(Seconds, RefusesWhatIsNotPlainSeconds) {
  for (const char* text : {"abc", "-1", "+5", "1e3", "0x10", "inf", "nan", "10s", " 10", "10 ", ".", "1.2.3", "5m"}) {
    std::string why;
    EXPECT_FALSE(parse_seconds(text, &why).has_value()) << "accepted: " << text;
    EXPECT_NE(why.find("number of seconds"), std::string::npos) << text << ": " << why;
  }
}

TEST(Seconds, RefusesMoreThanTheLargest) {
  std::string why;
  EXPECT_FALSE(parse_seconds("1000000001", &why).has_value());
  EXPECT_NE(why.find("largest"), std::string::npos) << why;
}

TEST(Seconds, FromTheEnvironment) {
  ::unsetenv("MCRPMPI_TEST_SECONDS");
  SecondsSetting unset = seconds_from_env("MCRPMPI_TEST_SECONDS");
  EXPECT_FALSE(unset.seconds.has_value());
  EXPECT_TRUE(unset.problem.empty());
  ::setenv("MCRPMPI_TEST_SECONDS", "7.25", 1);
  EXPECT_EQ(seconds_from_env("MCRPMPI_TEST_SECONDS").seconds, 7.25);
  ::setenv("MCRPMPI_TEST_SECONDS", "ten", 1);
  SecondsSetting bad = seconds_from_env("MCRPMPI_TEST_SECONDS");
  EXPECT_FALSE(bad.seconds.has_value());
  EXPECT_EQ(bad.problem.rfind("ignoring MCRPMPI_TEST_SECONDS=ten (expected a number of seconds", 0), 0u) << bad.problem;
  ::unsetenv("MCRPMPI_TEST_SECONDS");
}

}  // namespace
}  // namespace mcrp::env
