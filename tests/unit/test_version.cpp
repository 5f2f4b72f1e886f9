#include <gtest/gtest.h>

#include <cstring>

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
