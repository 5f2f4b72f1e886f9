// SchemaBuilder's add_* calls insert their names into the shared string pool
// under a rollback mark (StringPool::mark / rollback), no longer on a copy of
// the pool: a rejected call must still leave no string behind, and the
// strings a later call interns must get the offsets they would have had.
#include <gtest/gtest.h>

#include <string>

#include "base/error.hpp"
#include "format/schema_codec.hpp"
#include "schema/schema_builder.hpp"

namespace {

using uscope::SchemaBuilder;
using uscope::StringPool;

TEST(StringPoolRollback, ForgetsStringsInsertedAfterTheMark) {
  StringPool p;
  EXPECT_EQ(p.insert("a"), 0u);
  const size_t m = p.mark();
  EXPECT_EQ(p.insert("bb"), 2u);
  EXPECT_EQ(p.insert("a"), 0u);  // found, not inserted
  p.rollback(m);
  EXPECT_EQ(p.bytes(), std::string("a\0", 2));
  // "bb" is gone from the index too: inserted again, at the same offset.
  EXPECT_EQ(p.insert("cc"), 2u);
  EXPECT_EQ(p.insert("bb"), 5u);
  p.rollback(p.mark());  // nothing after the mark: no change
  EXPECT_EQ(p.bytes(), std::string("a\0cc\0bb\0", 8));
}

TEST(SchemaBuilderRollback, RejectedAddLeavesNoStringBehind) {
  SchemaBuilder b;
  b.add_scope("root", USCOPE_NO_PARENT, nullptr, USCOPE_CLOCK_INHERIT);
  const std::string before = b.schema().pool.bytes();
  // The second field's type is unknown: rejected after "ev" and "f0" were interned.
  const uscope_field_t bad[] = {{"f0", USCOPE_FT_U8, 0, 0, 0}, {"f1", 0x7E, 0, 0, 0}};
  EXPECT_THROW(b.add_event("ev", 0, bad, 2), uscope::Error);
  EXPECT_EQ(b.schema().pool.bytes(), before);
  EXPECT_TRUE(b.schema().events.empty());
  // Same for a storage whose property is wrong, and an enum with a NULL value.
  const uscope_field_t ok[] = {{"x", USCOPE_FT_U32, 0, 0, 0}};
  const uscope_field_t bad_prop[] = {{"p", USCOPE_FT_U8, 3, 0, 0}};  // enum_id on a non-enum field
  EXPECT_THROW(b.add_storage("st", 0, 4, 0, ok, 1, bad_prop, 1), uscope::Error);
  const char *values[] = {"v0", nullptr};
  EXPECT_THROW(b.add_enum("en", values, 2), uscope::Error);
  EXPECT_EQ(b.schema().pool.bytes(), before);
  // A good call afterwards gets the offsets right after the old pool.
  const uint16_t id = b.add_event("ev", 0, ok, 1);
  EXPECT_EQ(id, 0u);
  EXPECT_EQ(b.schema().events[0].name, before.size());
  EXPECT_EQ(b.schema().events[0].fields[0].name, before.size() + 3);
  EXPECT_EQ(b.schema().pool.bytes(), before + std::string("ev\0x\0", 5));
}

}  // namespace
