// The converters' option defaults and format names (src/convert/options.cpp):
// the core functions that convert.h's uscope_convert_options_init and
// uscope_convert_format_of export, and the Options every pipeline reads.
#include <gtest/gtest.h>

#include <cstring>

#include "convert/convert.hpp"

namespace cv = uscope::convert;

TEST(ConvertOptions, FormatOfSuffix) {
  EXPECT_EQ(cv::format_of("a.jsonl"), USCOPE_CONVERT_JSONL);
  EXPECT_EQ(cv::format_of("a.jsonl.gz"), USCOPE_CONVERT_JSONL);
  EXPECT_EQ(cv::format_of("a.json.gz"), USCOPE_CONVERT_JSONL);
  EXPECT_EQ(cv::format_of("dir/a.json"), USCOPE_CONVERT_JSONL);
  EXPECT_EQ(cv::format_of("a.uscope"), USCOPE_CONVERT_USCOPE);
  EXPECT_EQ(cv::format_of("a.pccx"), USCOPE_CONVERT_PCCX);
  // Suffixes are case-sensitive here (the JSONL writer's ".gz" is not).
  EXPECT_EQ(cv::format_of("a.JSONL"), USCOPE_CONVERT_AUTO);
  EXPECT_EQ(cv::format_of("a.txt"), USCOPE_CONVERT_AUTO);
  EXPECT_EQ(cv::format_of(".uscope"), USCOPE_CONVERT_USCOPE);
  EXPECT_EQ(cv::format_of("uscope"), USCOPE_CONVERT_AUTO);
  EXPECT_EQ(cv::format_of(nullptr), USCOPE_CONVERT_AUTO);
  // The C entry point is the same function.
  for (const char *p : {"a.jsonl", "a.json.gz", "b.uscope", "c.pccx", "d", "e.GZ"})
    EXPECT_EQ(uscope_convert_format_of(p), cv::format_of(p)) << p;
}

TEST(ConvertOptions, EndsWith) {
  EXPECT_TRUE(cv::ends_with("out.jsonl.gz", ".gz", false));
  EXPECT_FALSE(cv::ends_with("out.jsonl.GZ", ".gz", false));
  EXPECT_TRUE(cv::ends_with("out.jsonl.GZ", ".gz", true));
  EXPECT_FALSE(cv::ends_with("gz", ".gz", true));
  EXPECT_TRUE(cv::ends_with("x", "", false));
}

TEST(ConvertOptions, DefaultsMatchTheCApi) {
  uscope_convert_options_t a, b;
  std::memset(&a, 0xAB, sizeof a);
  std::memset(&b, 0xCD, sizeof b);
  cv::default_options(&a);
  uscope_convert_options_init(&b);
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
  EXPECT_EQ(a.struct_size, sizeof a);
  EXPECT_EQ(a.period_ps, 0u);  // the trace's, else 1000
  EXPECT_EQ(a.max_line_bytes, 64ull << 20);
  EXPECT_EQ(a.reorder_window, 65536u);
  EXPECT_EQ(a.num_sram_banks, 1024u);
}

TEST(ConvertOptions, ZerosBecomeDefaults) {
  const cv::Options none(nullptr);
  EXPECT_EQ(none.o.period_ps, 1000u);
  EXPECT_FALSE(none.period_given);
  EXPECT_EQ(none.o.queue_depth, 1024u);

  uscope_convert_options_t in;
  std::memset(&in, 0, sizeof in);
  in.struct_size = sizeof in;
  in.period_ps = 250;
  in.num_te = 3;
  const cv::Options o(&in);
  EXPECT_EQ(o.o.period_ps, 250u);
  EXPECT_TRUE(o.period_given);
  EXPECT_EQ(o.o.num_te, 3u);
  EXPECT_EQ(o.o.num_ve, 64u);  // 0: the default
  EXPECT_EQ(o.o.max_line_bytes, 64ull << 20);
  EXPECT_EQ(o.o.struct_size, sizeof in);
}

TEST(ConvertOptions, ReadsOnlyStructSizeBytes) {
  // An older caller's struct: the fields past its struct_size are not read.
  uscope_convert_options_t in;
  std::memset(&in, 0xFF, sizeof in);
  in.struct_size = 8;
  const cv::Options o(&in);
  uscope_convert_options_t d;
  cv::default_options(&d);
  EXPECT_EQ(o.o.struct_size, sizeof in);
  EXPECT_EQ(o.o.num_sram_banks, d.num_sram_banks);
  EXPECT_EQ(o.o.period_ps, 1000u);
  EXPECT_FALSE(o.period_given);
}
