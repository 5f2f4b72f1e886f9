// The schema (§4) and DUT descriptor (§3) as C++ values, and their one
// encoder and one decoder. Strings are offsets into the shared string pool
// (§1.3), exactly as on the wire.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace uscope {

// §1.3: packed NUL-terminated UTF-8 strings, addressed by u16 offset.
// Equal strings share one offset (the reference writer dedups the same way,
// so the pools come out byte-identical for the same calls).
class StringPool {
 public:
  // Intern s; throws Error(LIMIT) when the pool would pass 65,535 bytes, and
  // Error(INVALID_ARGUMENT) for a string with an embedded NUL.
  uint16_t insert(std::string_view s);
  // The string at off, or nullptr when off is not inside the pool.
  const char *at(uint16_t off) const;
  const std::string &bytes() const { return data_; }
  void assign(std::string bytes);  // decoder: adopt pool bytes as read
  // A rollback point: rollback(mark()) forgets every string inserted since,
  // so a caller can undo a failed series of inserts without copying the pool.
  size_t mark() const { return data_.size(); }
  void rollback(size_t mark);

 private:
  std::string data_;
  std::unordered_map<std::string, uint16_t> index_;
};

struct FieldDef {     // §4.3, with COMPAT 5 bytes 4-5
  uint16_t name = 0;
  uint8_t type = 0;
  uint8_t enum_id = 0;
  uint8_t role = 0;
  uint8_t pair_id = 0;
};
struct ClockDef {     // §4.9
  uint16_t name = 0;
  uint16_t clock_id = 0;
  uint32_t period_ps = 0;
};
struct ScopeDef {     // §4.4
  uint16_t name = 0;
  uint16_t scope_id = 0;
  uint16_t parent_id = 0xFFFF;
  uint16_t protocol = 0xFFFF;
  uint8_t clock_id = 0xFF;
};
struct EnumValue {    // §4.5
  uint8_t value = 0;
  uint16_t name = 0;
};
struct EnumDef {
  uint16_t name = 0;
  std::vector<EnumValue> values;
};
struct StorageDef {   // §4.6
  uint16_t name = 0;
  uint16_t storage_id = 0;
  uint16_t num_slots = 0;
  uint16_t flags = 0;
  uint16_t scope_id = 0xFFFF;
  std::vector<FieldDef> fields;
  std::vector<FieldDef> props;  // v0.3 storage properties (§4.6.2)
};
struct EventDef {     // §4.7
  uint16_t name = 0;
  uint16_t event_type_id = 0;
  uint16_t scope_id = 0xFFFF;
  std::vector<FieldDef> fields;
};
struct SummaryFieldDef {  // §4.8
  uint16_t name = 0;
  uint8_t type = 0;
  uint16_t scope_id = 0xFFFF;
};
struct DutProperty {  // §3.1
  uint16_t key = 0;
  uint16_t value = 0;
};

struct Schema {
  std::vector<ClockDef> clocks;
  std::vector<ScopeDef> scopes;
  std::vector<EnumDef> enums;
  std::vector<StorageDef> storages;
  std::vector<EventDef> events;
  std::vector<SummaryFieldDef> summary_fields;
  StringPool pool;  // shared with the DUT descriptor (§1.3)

  // nullptr for an offset past the pool: a file's schema may hold one.
  const char *str(uint16_t off) const { return pool.at(off); }
  // The same, "" for an offset past the pool (or wire::kNoString): for
  // callers that compare or print a name rather than test for its absence.
  const char *name(uint16_t off) const {
    const char *p = pool.at(off);
    return p ? p : "";
  }
};

// Sum of the sizes of the fields (§8.6.5 packing: no padding).
uint32_t packed_size(const std::vector<FieldDef> &fields);

// §4: CHUNK_SCHEMA payload. Throws Error(LIMIT) when a count does not fit its
// wire field or string_pool_offset passes 65,535.
std::vector<uint8_t> encode_schema(const Schema &s);
// Decode a CHUNK_SCHEMA payload. Throws Error(TRUNCATED / CORRUPT) on bad
// input; never reads outside [data, data+size).
Schema decode_schema(const uint8_t *data, size_t size);

// §3: CHUNK_DUT_DESC payload.
std::vector<uint8_t> encode_dut(const std::vector<DutProperty> &props);
std::vector<DutProperty> decode_dut(const uint8_t *data, size_t size);

}  // namespace uscope
