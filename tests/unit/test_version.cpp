#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "uscope/uscope.h"

TEST(Version, RuntimeMatchesHeader) {
  EXPECT_EQ(uscope_version_number(), static_cast<uint32_t>(USCOPE_VERSION_NUMBER));
  char expect[32];
  std::snprintf(expect, sizeof expect, "%d.%d.%d", USCOPE_VERSION_MAJOR, USCOPE_VERSION_MINOR,
                USCOPE_VERSION_PATCH);
  EXPECT_STREQ(uscope_version_string(), expect);
  EXPECT_EQ(uscope_format_version(), (0u << 16) | 3u);
}

TEST(Version, StatusStringsAreDistinctAndNeverNull) {
  for (int s = 0; s >= -23; --s) {
    ASSERT_NE(uscope_status_str(s), nullptr);
    EXPECT_STRNE(uscope_status_str(s), "unknown status") << s;
  }
  EXPECT_STREQ(uscope_status_str(-1000), "unknown status");
}

// uscope_set_last_error: what a layer over the C ABI records is what uscope_last_error() reads,
// per thread, cut to the fixed buffer rather than allocating.
TEST(LastError, SetByALayerReadByEveryone) {
  uscope_set_last_error("bridge: no such handle");
  EXPECT_STREQ(uscope_last_error(), "bridge: no such handle");
  std::thread other([] {
    EXPECT_STREQ(uscope_last_error(), "");
    uscope_set_last_error("other thread");
  });
  other.join();
  EXPECT_STREQ(uscope_last_error(), "bridge: no such handle");
  const std::string long_message(5000, 'x');
  uscope_set_last_error(long_message.c_str());
  EXPECT_EQ(std::string(uscope_last_error()), long_message.substr(0, 1023));
  uscope_set_last_error(nullptr);
  EXPECT_STREQ(uscope_last_error(), "");
  // A failing library call replaces it.
  EXPECT_EQ(uscope_schema_new(nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(uscope_last_error()), "");
}
