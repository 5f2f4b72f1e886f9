// Growable little-endian byte sink and bounds-checked byte source, for the
// encoders and decoders of whole structures (not the per-cycle path).
#pragma once

#include <cstdint>
#include <vector>

#include "base/error.hpp"
#include "format/wire.hpp"

namespace uscope {

class ByteSink {
 public:
  explicit ByteSink(std::vector<uint8_t> &out) : out_(out) {}
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { grow(2); wire::put_u16(end(2), v); }
  void u32(uint32_t v) { grow(4); wire::put_u32(end(4), v); }
  void u64(uint64_t v) { grow(8); wire::put_u64(end(8), v); }
  void bytes(const void *p, size_t n) {
    const auto *b = static_cast<const uint8_t *>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void zeros(size_t n) { out_.insert(out_.end(), n, 0); }
  size_t size() const { return out_.size(); }

 private:
  void grow(size_t n) { out_.resize(out_.size() + n); }
  uint8_t *end(size_t n) { return out_.data() + out_.size() - n; }
  std::vector<uint8_t> &out_;
};

// Every read checks the remaining length and throws Error(TRUNCATED) with the
// name of the structure being read, so hostile input cannot read out of bounds.
class ByteSource {
 public:
  ByteSource(const uint8_t *p, size_t n, const char *what) : p_(p), n_(n), what_(what) {}
  uint8_t u8() { need(1); return p_[pos_++]; }
  uint16_t u16() { need(2); uint16_t v = wire::get_u16(p_ + pos_); pos_ += 2; return v; }
  uint32_t u32() { need(4); uint32_t v = wire::get_u32(p_ + pos_); pos_ += 4; return v; }
  uint64_t u64() { need(8); uint64_t v = wire::get_u64(p_ + pos_); pos_ += 8; return v; }
  const uint8_t *take(size_t n) { need(n); const uint8_t *r = p_ + pos_; pos_ += n; return r; }
  void skip(size_t n) { need(n); pos_ += n; }
  size_t pos() const { return pos_; }
  size_t remaining() const { return n_ - pos_; }
  void seek(size_t pos) {
    if (pos > n_) fail(USCOPE_ERR_TRUNCATED, "%s: offset %zu is past its end (%zu bytes)", what_, pos, n_);
    pos_ = pos;
  }

 private:
  void need(size_t k) {
    if (k > n_ - pos_)
      fail(USCOPE_ERR_TRUNCATED, "%s: needs %zu more bytes at offset %zu, has %zu", what_, k, pos_,
           n_ - pos_);
  }
  const uint8_t *p_;
  size_t n_;
  size_t pos_ = 0;
  const char *what_;
};

}  // namespace uscope
