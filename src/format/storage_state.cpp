#include "format/storage_state.hpp"

#include <cstring>

#include "format/bytes.hpp"
#include "base/error.hpp"

namespace uscope {

std::vector<StorageLayout> make_layouts(const Schema &schema) {
  std::vector<StorageLayout> out;
  out.reserve(schema.storages.size());
  for (const auto &st : schema.storages) {
    StorageLayout L;
    L.storage_id = st.storage_id;
    L.num_slots = st.num_slots;
    L.sparse = (st.flags & wire::SF_SPARSE) != 0;
    L.mask_bytes = L.sparse ? (st.num_slots + 7u) / 8u : 0;
    for (const auto &f : st.fields) {
      L.field_off.push_back(L.slot_size);
      L.field_size.push_back(static_cast<uint8_t>(wire::field_type_size(f.type)));
      L.field_type.push_back(f.type);
      L.slot_size += wire::field_type_size(f.type);
    }
    for (const auto &p : st.props) {
      L.prop_off.push_back(L.prop_size);
      L.prop_field_size.push_back(static_cast<uint8_t>(wire::field_type_size(p.type)));
      L.prop_type.push_back(p.type);
      L.prop_size += wire::field_type_size(p.type);
    }
    out.push_back(std::move(L));
  }
  return out;
}

StorageState::StorageState(const StorageLayout &layout)
    : layout_(&layout),
      field_off_(layout.field_off.data()),
      field_size_(layout.field_size.data()),
      slot_size_(layout.slot_size),
      sparse_(layout.sparse),
      valid_(layout.sparse ? layout.num_slots : 0, 0),
      data_(size_t{layout.num_slots} * layout.slot_size, 0),
      props_(layout.prop_size, 0) {}

bool StorageState::load_slots(const uint8_t *mask, const uint8_t *packed, size_t packed_size) {
  const uint32_t ss = layout_->slot_size;
  if (!layout_->sparse) {
    if (packed_size != data_.size()) return false;
    if (packed_size) std::memcpy(data_.data(), packed, packed_size);
    return true;
  }
  uint32_t n = 0;
  for (uint32_t s = 0; s < layout_->num_slots; ++s) n += (mask[s / 8] >> (s % 8)) & 1u;
  if (size_t{n} * ss != packed_size) return false;
  std::fill(data_.begin(), data_.end(), 0);
  const uint8_t *p = packed;
  for (uint32_t s = 0; s < layout_->num_slots; ++s) {
    valid_[s] = (mask[s / 8] >> (s % 8)) & 1u;
    if (valid_[s]) {
      if (ss) std::memcpy(&data_[size_t{s} * ss], p, ss);
      p += ss;
    }
  }
  num_valid_ = n;
  return true;
}

void StorageState::encode_block(std::vector<uint8_t> &out) const {
  const size_t start = out.size();
  ByteSink o(out);
  o.u16(layout_->storage_id);  // §8.5 checkpoint_block_t
  o.u16(0);
  o.u32(0);                    // size, patched below
  const uint32_t ss = layout_->slot_size;
  if (layout_->sparse) {       // §8.5.1: LSB-first mask, then the valid slots' data
    const size_t mask_at = out.size();
    o.zeros(layout_->mask_bytes);
    for (uint32_t s = 0; s < layout_->num_slots; ++s)
      if (valid_[s]) out[mask_at + s / 8] |= static_cast<uint8_t>(1u << (s % 8));
    out.reserve(out.size() + size_t{num_valid_} * ss + props_.size());
    for (uint32_t s = 0; s < layout_->num_slots; ++s)
      if (valid_[s]) o.bytes(&data_[size_t{s} * ss], ss);
  } else {                     // §8.5.2: every slot
    o.bytes(data_.data(), data_.size());
  }
  o.bytes(props_.data(), props_.size());  // v0.3 property data
  wire::put_u32(&out[start + 4], static_cast<uint32_t>(out.size() - start - 8));
}

void StorageState::decode_block(const uint8_t *payload, size_t size) {
  const size_t prop = layout_->prop_size;
  if (layout_->sparse) {
    if (size < layout_->mask_bytes + prop)
      fail(USCOPE_ERR_CORRUPT, "checkpoint block of storage %u: %zu bytes, too short for its mask",
           layout_->storage_id, size);
    if (!load_slots(payload, payload + layout_->mask_bytes, size - layout_->mask_bytes - prop))
      fail(USCOPE_ERR_CORRUPT,
           "checkpoint block of storage %u: %zu bytes do not match its valid mask",
           layout_->storage_id, size);
  } else if (size != data_.size() + prop || !load_slots(nullptr, payload, size - prop)) {
    // The size is checked first: a block shorter than its property data must
    // not reach the copies below (they would read before and past payload).
    fail(USCOPE_ERR_CORRUPT, "checkpoint block of dense storage %u: %zu bytes, expected %zu",
         layout_->storage_id, size, data_.size() + prop);
  }
  if (prop) std::memcpy(props_.data(), payload + size - prop, prop);
}

void encode_checkpoint(const std::vector<StorageState> &states, std::vector<uint8_t> &out) {
  for (const auto &s : states) s.encode_block(out);
}

void decode_checkpoint(const uint8_t *data, size_t size, std::vector<StorageState> &states) {
  ByteSource in(data, size, "checkpoint");
  for (auto &st : states) {
    const uint16_t sid = in.u16();
    in.skip(2);
    const uint32_t n = in.u32();
    if (sid != st.layout().storage_id)
      fail(USCOPE_ERR_CORRUPT, "checkpoint: block for storage %u where storage %u was expected",
           sid, st.layout().storage_id);
    st.decode_block(in.take(n), n);
  }
  if (in.remaining())
    fail(USCOPE_ERR_CORRUPT, "checkpoint: %zu bytes left after the last block (COMPAT 14)",
         in.remaining());
}

}  // namespace uscope
