// Storage layouts (§4.6, §8.6.5 packing) and storage state with its
// checkpoint-block codec (§8.5). The writer's encoder thread tracks state
// with it to emit checkpoints; the reader replays deltas into it.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "format/schema_codec.hpp"
#include "format/wire.hpp"

namespace uscope {

// Where each field lives inside a packed slot, computed once from the schema.
struct StorageLayout {
  uint16_t storage_id = 0;
  uint16_t num_slots = 0;
  bool sparse = false;
  uint32_t slot_size = 0;
  uint32_t mask_bytes = 0;  // ceil(num_slots/8) when sparse (§8.5.1)
  std::vector<uint32_t> field_off;
  std::vector<uint8_t> field_size;
  std::vector<uint8_t> field_type;
  uint32_t prop_size = 0;
  std::vector<uint32_t> prop_off;
  std::vector<uint8_t> prop_field_size;
  std::vector<uint8_t> prop_type;

  // Largest checkpoint block this storage can produce, header included.
  uint64_t max_block_size() const {
    return wire::kCheckpointBlockHeaderSize + mask_bytes + uint64_t{num_slots} * slot_size +
           prop_size;
  }
};

std::vector<StorageLayout> make_layouts(const Schema &schema);

class StorageState {
 public:
  explicit StorageState(const StorageLayout &layout);

  // §8.6.2 semantics with COMPAT 13: SET validates a sparse slot, ADD wraps at
  // the field width, CLEAR invalidates a sparse slot and zeroes a dense one.
  // Indices must already be checked by the caller.
  // (The per-op paths read the layout through the copies below: one load
  // fewer on the chain of every op a reader replays.)
  void set(uint16_t slot, uint16_t field, uint64_t v) {
    uint8_t *p = data_.data() + size_t{slot} * slot_size_ + field_off_[field];
    wire::put_field(p, field_size_[field], v);
    mark_valid(slot);
  }
  void add(uint16_t slot, uint16_t field, uint64_t v) {
    uint8_t *p = data_.data() + size_t{slot} * slot_size_ + field_off_[field];
    const unsigned sz = field_size_[field];
    wire::put_field(p, sz, wire::get_field(p, sz) + v);
    mark_valid(slot);
  }
  void clear(uint16_t slot) {
    if (sparse_ && valid_[slot]) {
      valid_[slot] = 0;
      --num_valid_;
    }
    const uint32_t ss = slot_size_;
    uint8_t *d = data_.data() + size_t{slot} * ss;
    // Slots are small: a few (overlapping) stores, not a memset call or a
    // `rep stos`, whose start-up cost dwarfs 16 bytes.
    if (ss >= 8 && ss <= 32) {
      wire::put_u64(d, 0);
      wire::put_u64(d + ss - 8, 0);
      if (ss > 16) {
        wire::put_u64(d + 8, 0);
        wire::put_u64(d + ss - 16, 0);
      }
    } else if (ss >= 4 && ss < 8) {
      wire::put_u32(d, 0);
      wire::put_u32(d + ss - 4, 0);
    } else if (ss) {
      std::memset(d, 0, ss);
    }
  }
  void prop_set(uint16_t prop, uint64_t v) {
    wire::put_field(&props_[layout_->prop_off[prop]], layout_->prop_field_size[prop], v);
  }
  uint64_t get(uint16_t slot, uint16_t field) const {
    return wire::get_field(&data_[slot * layout_->slot_size + layout_->field_off[field]],
                           layout_->field_size[field]);
  }
  uint64_t prop(uint16_t p) const {
    return wire::get_field(&props_[layout_->prop_off[p]], layout_->prop_field_size[p]);
  }
  bool valid(uint16_t slot) const { return !layout_->sparse || valid_[slot]; }
  uint32_t occupancy() const { return layout_->sparse ? num_valid_ : layout_->num_slots; }
  const StorageLayout &layout() const { return *layout_; }

  // Replace slots wholesale: mask (sparse only, LSB-first) plus packed data of
  // the valid slots in slot order. Returns false when sizes disagree.
  bool load_slots(const uint8_t *mask, const uint8_t *packed, size_t packed_size);

  // Append this storage's checkpoint block (§8.5, COMPAT 14) to out.
  void encode_block(std::vector<uint8_t> &out) const;
  // Load from a block payload (header already consumed). Throws
  // Error(CORRUPT) when the size does not match the layout exactly.
  void decode_block(const uint8_t *payload, size_t size);

 private:
  void mark_valid(uint16_t slot) {
    if (sparse_ && !valid_[slot]) {
      valid_[slot] = 1;
      ++num_valid_;
    }
  }
  const StorageLayout *layout_;
  // Copies of layout_'s per-op fields (they point into *layout_, so copies
  // of this state share them safely).
  const uint32_t *field_off_;
  const uint8_t *field_size_;
  uint32_t slot_size_;
  bool sparse_;
  std::vector<uint8_t> valid_;  // one byte per slot: fast to test and set
  uint32_t num_valid_ = 0;
  std::vector<uint8_t> data_;
  std::vector<uint8_t> props_;
};

// A checkpoint: one block per storage, in schema order (COMPAT 14).
void encode_checkpoint(const std::vector<StorageState> &states, std::vector<uint8_t> &out);
// Loads every block; throws Error(CORRUPT / TRUNCATED) on a malformed checkpoint.
void decode_checkpoint(const uint8_t *data, size_t size, std::vector<StorageState> &states);

}  // namespace uscope
