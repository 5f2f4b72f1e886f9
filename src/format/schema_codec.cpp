#include "format/schema_codec.hpp"

#include <limits>

#include "format/bytes.hpp"
#include "base/error.hpp"
#include "format/wire.hpp"

namespace uscope {

uint16_t StringPool::insert(std::string_view s) {
  if (s.find('\0') != std::string_view::npos)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "string contains a NUL byte");
  auto it = index_.find(std::string(s));
  if (it != index_.end()) return it->second;
  // §1.3: offsets are u16 and 0xFFFF means "none", so the pool stays below 64 KiB.
  if (data_.size() + s.size() + 1 > wire::kMaxStringPool)
    fail(USCOPE_ERR_LIMIT, "string pool would grow to %zu bytes; the format allows %zu (spec §1.3)",
         data_.size() + s.size() + 1, wire::kMaxStringPool);
  const auto off = static_cast<uint16_t>(data_.size());
  data_.append(s);
  data_.push_back('\0');
  index_.emplace(std::string(s), off);
  return off;
}

const char *StringPool::at(uint16_t off) const {
  if (off >= data_.size()) return nullptr;
  return data_.c_str() + off;  // the pool ends with NUL, so every offset is terminated
}

void StringPool::rollback(size_t mark) {
  if (mark >= data_.size()) return;
  // Only on a failed add: a scan of the index is fine here.
  for (auto it = index_.begin(); it != index_.end();) {
    if (it->second >= mark) it = index_.erase(it);
    else ++it;
  }
  data_.resize(mark);
}

void StringPool::assign(std::string bytes) {
  data_ = std::move(bytes);
  // A pool read from a file may lack its final NUL; add one so at() stays terminated.
  if (!data_.empty() && data_.back() != '\0') data_.push_back('\0');
  index_.clear();
}

uint32_t packed_size(const std::vector<FieldDef> &fields) {
  uint32_t n = 0;
  for (const auto &f : fields) n += wire::field_type_size(f.type);
  return n;
}

namespace {

void put_field_def(ByteSink &o, const FieldDef &f) {  // §4.3 + COMPAT 5
  o.u16(f.name);
  o.u8(f.type);
  o.u8(f.enum_id);
  o.u8(f.role);
  o.u8(f.pair_id);
  o.zeros(2);
}

FieldDef get_field_def(ByteSource &in) {
  FieldDef f;
  f.name = in.u16();
  f.type = in.u8();
  f.enum_id = in.u8();
  f.role = in.u8();
  f.pair_id = in.u8();
  in.skip(2);
  return f;
}

template <typename T>
void check_count(size_t n, const char *what) {
  if (n > std::numeric_limits<T>::max())
    fail(USCOPE_ERR_LIMIT, "%zu %s; the format allows %zu (spec §4.1)", n, what,
         static_cast<size_t>(std::numeric_limits<T>::max()));
}

}  // namespace

std::vector<uint8_t> encode_schema(const Schema &s) {
  check_count<uint8_t>(s.enums.size(), "enums");
  check_count<uint8_t>(s.clocks.size(), "clock domains");
  check_count<uint16_t>(s.scopes.size(), "scopes");
  check_count<uint16_t>(s.storages.size(), "storages");
  check_count<uint16_t>(s.events.size(), "event types");
  check_count<uint16_t>(s.summary_fields.size(), "summary fields");

  std::vector<uint8_t> out;
  ByteSink o(out);
  o.zeros(wire::kSchemaHeaderSize);  // filled in below, once the pool offset is known
  for (const auto &c : s.clocks) {
    o.u16(c.name);
    o.u16(c.clock_id);
    o.u32(c.period_ps);
  }
  for (const auto &sc : s.scopes) {
    o.u16(sc.name);
    o.u16(sc.scope_id);
    o.u16(sc.parent_id);
    o.u16(sc.protocol);
    o.u8(sc.clock_id);
    o.zeros(3);
  }
  for (const auto &e : s.enums) {
    check_count<uint8_t>(e.values.size(), "enum values");
    o.u16(e.name);
    o.u8(static_cast<uint8_t>(e.values.size()));
    o.u8(0);
    for (const auto &v : e.values) {
      o.u8(v.value);
      o.u8(0);
      o.u16(v.name);
    }
  }
  for (const auto &st : s.storages) {
    check_count<uint16_t>(st.fields.size(), "fields in a storage");
    check_count<uint16_t>(st.props.size(), "properties in a storage");
    o.u16(st.name);
    o.u16(st.storage_id);
    o.u16(st.num_slots);
    o.u16(static_cast<uint16_t>(st.fields.size()));
    o.u16(st.flags);
    o.u16(st.scope_id);
    o.u16(static_cast<uint16_t>(st.props.size()));
    o.u16(0);
    for (const auto &f : st.fields) put_field_def(o, f);
    for (const auto &f : st.props) put_field_def(o, f);
  }
  for (const auto &ev : s.events) {
    check_count<uint16_t>(ev.fields.size(), "fields in an event");
    o.u16(ev.name);
    o.u16(ev.event_type_id);
    o.u16(static_cast<uint16_t>(ev.fields.size()));
    o.u16(ev.scope_id);
    for (const auto &f : ev.fields) put_field_def(o, f);
  }
  for (const auto &sf : s.summary_fields) {
    o.u16(sf.name);
    o.u8(sf.type);
    o.u8(0);
    o.u16(sf.scope_id);
    o.u16(0);
  }
  const size_t pool_off = out.size();
  if (pool_off > 0xFFFF)
    fail(USCOPE_ERR_LIMIT,
         "schema definitions take %zu bytes; string_pool_offset is a u16 (spec §4.1)", pool_off);
  o.bytes(s.pool.bytes().data(), s.pool.bytes().size());

  uint8_t *h = out.data();  // §4.1 schema header
  h[0] = static_cast<uint8_t>(s.enums.size());
  h[1] = static_cast<uint8_t>(s.clocks.size());
  wire::put_u16(h + 2, static_cast<uint16_t>(s.scopes.size()));
  wire::put_u16(h + 4, static_cast<uint16_t>(s.storages.size()));
  wire::put_u16(h + 6, static_cast<uint16_t>(s.events.size()));
  wire::put_u16(h + 8, static_cast<uint16_t>(s.summary_fields.size()));
  wire::put_u16(h + 10, static_cast<uint16_t>(pool_off));
  return out;
}

Schema decode_schema(const uint8_t *data, size_t size) {
  ByteSource in(data, size, "schema chunk");
  Schema s;
  const uint8_t num_enums = in.u8();
  const uint8_t num_clocks = in.u8();
  const uint16_t num_scopes = in.u16();
  const uint16_t num_storages = in.u16();
  const uint16_t num_events = in.u16();
  const uint16_t num_summary = in.u16();
  const uint16_t pool_off = in.u16();
  if (pool_off > size)
    fail(USCOPE_ERR_CORRUPT, "schema: string_pool_offset %u is past the chunk end (%zu)", pool_off,
         size);
  for (unsigned i = 0; i < num_clocks; ++i) {
    ClockDef c;
    c.name = in.u16();
    c.clock_id = in.u16();
    c.period_ps = in.u32();
    s.clocks.push_back(c);
  }
  for (unsigned i = 0; i < num_scopes; ++i) {
    ScopeDef sc;
    sc.name = in.u16();
    sc.scope_id = in.u16();
    sc.parent_id = in.u16();
    sc.protocol = in.u16();
    sc.clock_id = in.u8();
    in.skip(3);
    s.scopes.push_back(sc);
  }
  for (unsigned i = 0; i < num_enums; ++i) {
    EnumDef e;
    e.name = in.u16();
    const uint8_t n = in.u8();
    in.skip(1);
    for (unsigned j = 0; j < n; ++j) {
      EnumValue v;
      v.value = in.u8();
      in.skip(1);
      v.name = in.u16();
      e.values.push_back(v);
    }
    s.enums.push_back(std::move(e));
  }
  for (unsigned i = 0; i < num_storages; ++i) {
    StorageDef st;
    st.name = in.u16();
    st.storage_id = in.u16();
    st.num_slots = in.u16();
    const uint16_t nf = in.u16();
    st.flags = in.u16();
    st.scope_id = in.u16();
    const uint16_t np = in.u16();
    in.skip(2);
    // Bound the reservation by what the input can hold, so a hostile count
    // cannot make us allocate more than the chunk's size.
    if (static_cast<size_t>(nf + np) * wire::kFieldDefSize > in.remaining())
      fail(USCOPE_ERR_TRUNCATED, "schema: storage %u declares %u fields + %u properties, chunk too short",
           i, nf, np);
    for (unsigned j = 0; j < nf; ++j) st.fields.push_back(get_field_def(in));
    for (unsigned j = 0; j < np; ++j) st.props.push_back(get_field_def(in));
    s.storages.push_back(std::move(st));
  }
  for (unsigned i = 0; i < num_events; ++i) {
    EventDef ev;
    ev.name = in.u16();
    ev.event_type_id = in.u16();
    const uint16_t nf = in.u16();
    ev.scope_id = in.u16();
    if (static_cast<size_t>(nf) * wire::kFieldDefSize > in.remaining())
      fail(USCOPE_ERR_TRUNCATED, "schema: event %u declares %u fields, chunk too short", i, nf);
    for (unsigned j = 0; j < nf; ++j) ev.fields.push_back(get_field_def(in));
    s.events.push_back(std::move(ev));
  }
  for (unsigned i = 0; i < num_summary; ++i) {
    SummaryFieldDef sf;
    sf.name = in.u16();
    sf.type = in.u8();
    in.skip(1);
    sf.scope_id = in.u16();
    in.skip(2);
    s.summary_fields.push_back(sf);
  }
  if (in.pos() > pool_off)
    fail(USCOPE_ERR_CORRUPT, "schema: definitions run to offset %zu, past string_pool_offset %u",
         in.pos(), pool_off);
  s.pool.assign(std::string(reinterpret_cast<const char *>(data) + pool_off, size - pool_off));
  return s;
}

std::vector<uint8_t> encode_dut(const std::vector<DutProperty> &props) {
  check_count<uint16_t>(props.size(), "DUT properties");
  std::vector<uint8_t> out;
  ByteSink o(out);
  o.u16(static_cast<uint16_t>(props.size()));  // §3
  o.u16(0);
  for (const auto &p : props) {
    o.u16(p.key);
    o.u16(p.value);
  }
  return out;
}

std::vector<DutProperty> decode_dut(const uint8_t *data, size_t size) {
  ByteSource in(data, size, "DUT descriptor");
  const uint16_t n = in.u16();
  in.skip(2);
  std::vector<DutProperty> props;
  for (unsigned i = 0; i < n; ++i) {
    DutProperty p;
    p.key = in.u16();
    p.value = in.u16();
    props.push_back(p);
  }
  return props;
}

}  // namespace uscope
