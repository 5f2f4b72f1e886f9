// .pccx reader: reads (or copies) the whole file, validates the container,
// the JSON header and the payload at open, and decodes events into a compact
// array. Every declared length is checked against the bytes present before
// anything is allocated, so memory is bounded by the file size.
//
// The file is read with pread() into memory the reader owns, not mapped: a
// file truncated or rewritten while it is read gives Error(TRUNCATED)
// ("... shrank under the reader ..."), never a SIGBUS (io/input_file.hpp).
// The payload must stay addressable for pccx_reader_payload(), so the copy
// is kept for the reader's lifetime.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pccx/pccx.h"
#include "io/input_file.hpp"
#include "pccx/pccx_decode.hpp"

namespace uscope::pccx {

class Reader {
 public:
  void open_file(const std::string &path, uint32_t flags);
  void open_memory(const void *data, size_t n, uint32_t flags);

  const pccx_header_t &header() const { return hdr_; }
  const char *json() const { return reinterpret_cast<const char *>(data_ + kJsonOff); }
  size_t json_size() const { return static_cast<size_t>(hdr_.header_bytes); }
  const uint8_t *payload() const { return payload_; }
  uint64_t event_count() const { return events_.size(); }
  void event(uint64_t i, pccx_event_t *out) const;

  std::string last_error;

 private:
  static constexpr size_t kJsonOff = 16;
  // NUL-separated strings; an event keeps the offset of its own.
  struct Pool {
    std::string bytes;
    uint64_t intern(const char *s, size_t n);
  };

  void parse(uint32_t flags);
  void decode_bincode();
  void decode_flatbuf();

  std::vector<uint8_t> copy_;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  const uint8_t *payload_ = nullptr;
  pccx_header_t hdr_{};
  HeaderStrings strings_;
  std::vector<DecodedEvent> events_;
  Pool pool_;
};

}  // namespace uscope::pccx
