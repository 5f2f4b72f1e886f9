// The .pccx parsing shared by the whole-file Reader (pccx_reader.cpp) and the
// bounded-memory SortedEventStream (pccx_stream.cpp): one parser of the
// container and JSON header, one decoder per payload structure.
//
// The decoders read the payload through a byte source `Src` with one call,
// `const uint8_t *at(uint64_t pos, size_t k)`: k bytes at payload offset pos,
// asked for only after the decoder has checked that they lie inside the
// payload. The Reader's source is the payload in memory; the stream's is a
// window refilled with pread(), so a decoder never keeps a pointer across two
// at() calls and asks for positions that never go back. Strings go to
// `Names::intern(s, n)`, which returns the handle kept in the event: the
// decoders do not know where strings are stored.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <string>

#include "base/error.hpp"
#include "pccx/pccx.h"
#include "pccx/pccx_common.hpp"

namespace uscope::pccx {

inline constexpr uint64_t kNoString = ~uint64_t{0};

// One event as decoded; strings are handles of the caller's Names.
struct DecodedEvent {
  uint32_t core_id;
  uint32_t type_id;
  uint64_t start;
  uint64_t duration;
  uint64_t type_name;  // handle, or kNoString: the table name of type_id
  uint64_t api_name;   // handle, or kNoString
};

// The JSON header's strings, which hdr's pointers refer to (attach_strings).
struct HeaderStrings {
  std::string lab_version, isa_version, encoding;
};

// Bytes of a file's start that parse_fixed_header needs to say what a
// non-pccx file is (describe_content looks at up to 256).
inline constexpr size_t kDescribeBytes = 256;

// Open flags other than PCCX_OPEN_* are INVALID_ARGUMENT.
void check_open_flags(uint32_t flags);
// The 16-byte fixed header (pccx-format "Binary Layout"): magic, major,
// JSON header length checked against the 64 MiB bound and the file size.
// `data` holds the file's first min(file_size, avail) bytes, avail >= 16 or
// the whole file. Sets struct_size, major, minor, header_bytes.
void parse_fixed_header(const uint8_t *data, size_t avail, uint64_t file_size, pccx_header_t &hdr);
// The JSON header (pccx-format "JSON Header Fields", COMPAT 19 and 22).
void parse_json_header(const char *js, size_t n, pccx_header_t &hdr, HeaderStrings &strings);
// payload.byte_length against the bytes that follow the JSON header.
void check_payload_fits(const pccx_header_t &hdr, uint64_t file_size);
// checksum_status from checksum and computed_checksum; a mismatch is
// USCOPE_ERR_CHECKSUM under PCCX_OPEN_STRICT_CHECKSUM.
void settle_checksum(pccx_header_t &hdr, uint32_t flags);
// Whether settle_checksum would throw: a strict open whose checksum is wrong.
inline bool strict_checksum_fails(const pccx_header_t &hdr, uint32_t flags) {
  return (flags & PCCX_OPEN_STRICT_CHECKSUM) && hdr.checksum_present && hdr.checksum != hdr.computed_checksum;
}
void attach_strings(pccx_header_t &hdr, const HeaderStrings &strings);

// Payload in memory (the Reader).
struct MemorySource {
  const uint8_t *p;
  const uint8_t *at(uint64_t pos, size_t) const { return p + pos; }
};

// bincode NpuTrace (COMPAT 20): u64 total_cycles, u64 count, then count
// events. A pull decoder: begin(), then next() until it returns false; a
// second pass may resume() at an event boundary that the first pass saw.
template <class Src, class Names>
class BincodeDecoder {
 public:
  // n: payload bytes. Writes hdr.total_cycles (begin), hdr.num_api_names and
  // hdr.payload_trailing_bytes (at the end).
  BincodeDecoder(Src &src, Names &names, uint64_t n, pccx_header_t &hdr)
      : src_(src), names_(names), n_(n), hdr_(hdr) {}

  void begin() {
    need_bytes(16, "the NpuTrace header (total_cycles, event count)");
    const uint8_t *h = src_.at(0, 16);
    hdr_.total_cycles = load_u64(h);
    count_ = load_u64(h + 8);
    pos_ = 16;
    // Checked before anything is sized from it.
    if (count_ > (n_ - pos_) / kMinBincodeEvent)
      fail(USCOPE_ERR_TRUNCATED,
           "pccx bincode payload declares %" PRIu64 " events but its %" PRIu64
           " remaining bytes hold at most %" PRIu64,
           count_, n_ - pos_, (n_ - pos_) / kMinBincodeEvent);
  }
  // Continue at payload offset pos, which holds event `index` of `count`.
  void resume(uint64_t pos, uint64_t index, uint64_t count) {
    pos_ = pos;
    i_ = index;
    count_ = count;
  }
  uint64_t count() const { return count_; }
  uint64_t pos() const { return pos_; }    // offset of the next event
  uint64_t index() const { return i_; }    // index of the next event

  bool next(DecodedEvent &ev) {
    if (i_ == count_) {
      // pccx-lab's bincode::deserialize ignores bytes after the value: so do
      // we, and say how many (uscope info shows them).
      hdr_.payload_trailing_bytes = n_ - pos_;
      return false;
    }
    need_bytes(20, "an event's core_id/start_cycle/duration");
    const uint8_t *r = src_.at(pos_, 20);
    ev.core_id = load_u32(r);
    ev.start = load_u64(r + 4);
    ev.duration = load_u64(r + 12);
    pos_ += 20;
    uint64_t len;
    const char *s = read_string("event_type", len);
    const uint32_t id = type_id_of(s, static_cast<size_t>(len));
    if (id == PCCX_EVENT_TYPE_COUNT) {
      ev.type_id = PCCX_EVENT_UNKNOWN;  // unknown name: id 0, the name kept
      ev.type_name = names_.intern(s, static_cast<size_t>(len));
    } else {
      ev.type_id = id;
      ev.type_name = kNoString;
    }
    need_bytes(1, "an event's api_name option tag");
    const uint8_t tag = *src_.at(pos_++, 1);
    if (tag == 1) {
      s = read_string("api_name", len);
      ev.api_name = names_.intern(s, static_cast<size_t>(len));
      ++hdr_.num_api_names;
    } else if (tag == 0) {
      ev.api_name = kNoString;
    } else {
      fail(USCOPE_ERR_CORRUPT, "pccx bincode payload: api_name option tag %u of event %" PRIu64
           " is not 0 or 1", tag, i_);
    }
    ++i_;
    return true;
  }

 private:
  void need_bytes(uint64_t k, const char *what) const {
    if (n_ - pos_ < k)
      fail(USCOPE_ERR_TRUNCATED,
           "pccx bincode payload ends inside %s at payload offset %" PRIu64 " (%" PRIu64
           " bytes, %" PRIu64 " events decoded)",
           what, pos_, n_, i_);
  }
  // A bincode string: u64 length, UTF-8 bytes. Valid until the next at().
  const char *read_string(const char *what, uint64_t &len) {
    need_bytes(8, what);
    len = load_u64(src_.at(pos_, 8));
    pos_ += 8;
    if (len > n_ - pos_)
      fail(USCOPE_ERR_TRUNCATED,
           "pccx bincode payload: %s declares %" PRIu64 " bytes but %" PRIu64 " remain (event %" PRIu64 ")",
           what, len, n_ - pos_, i_);
    const char *s = reinterpret_cast<const char *>(src_.at(pos_, static_cast<size_t>(len)));
    pos_ += len;
    if (!short_ascii(s, len) && !valid_utf8(s, static_cast<size_t>(len)))
      fail(USCOPE_ERR_BAD_UTF8, "pccx bincode payload: %s of event %" PRIu64 " is not valid UTF-8", what, i_);
    return s;
  }

  // Most strings are short ASCII names, which a plain loop clears faster
  // than the SIMD validator's setup.
  static bool short_ascii(const char *s, uint64_t len) {
    if (len > 32) return false;
    unsigned char any = 0;
    for (uint64_t i = 0; i < len; ++i) any |= static_cast<unsigned char>(s[i]);
    return any < 0x80;
  }

  Src &src_;
  Names &names_;
  const uint64_t n_;
  pccx_header_t &hdr_;
  uint64_t pos_ = 0;
  uint64_t i_ = 0;
  uint64_t count_ = 0;
};

// flatbuf records (pccx-format "Flat Buffer Layout", COMPAT 21). As
// pccx-lab: the event array ends at the first 24-byte-aligned offset holding
// the PCC2 magic with at least 8 bytes left, else at the last whole record
// (a partial last record is ignored). Read in order, that is the first
// record slot whose first u32 is the magic, so no scan ahead is needed.
template <class Src>
class FlatbufRecords {
 public:
  FlatbufRecords(Src &src, uint64_t n) : src_(src), n_(n) {}
  // Continue at record `index`; stop before record `end_index` (a second
  // pass, which knows where the records end).
  void resume(uint64_t index, uint64_t end_index) {
    i_ = index;
    stop_ = end_index;
  }

  bool next(DecodedEvent &ev) {
    const uint64_t off = i_ * kFlatStride;
    if (i_ == stop_) return finish(off, false);
    const uint64_t left = n_ - off;
    if (left < kFlatStride) return finish(off, left >= 8 && load_u32(src_.at(off, 4)) == kFlatMagicV2);
    const uint8_t *r = src_.at(off, kFlatStride);
    ev.core_id = load_u32(r);
    if (ev.core_id == kFlatMagicV2) return finish(off, true);
    ev.start = load_u64(r + 4);
    ev.duration = load_u64(r + 12);
    ev.type_id = load_u32(r + 20);
    ev.type_name = kNoString;
    ev.api_name = kNoString;
    const uint64_t e = ev.start + ev.duration < ev.start ? UINT64_MAX : ev.start + ev.duration;
    if (e > total_) total_ = e;
    ++i_;
    return true;
  }
  uint64_t count() const { return i_; }          // records read so far (all of them at the end)
  uint64_t end() const { return end_; }          // payload offset where the records end
  bool trailer() const { return trailer_; }      // a PCC2 trailer starts at end()
  uint64_t total_cycles() const { return total_; }  // max start+duration (saturated)

 private:
  bool finish(uint64_t off, bool trailer) {
    end_ = off;
    trailer_ = trailer;
    return false;
  }

  Src &src_;
  const uint64_t n_;
  uint64_t i_ = 0;
  uint64_t stop_ = UINT64_MAX;
  uint64_t end_ = 0;
  bool trailer_ = false;
  uint64_t total_ = 0;
};

// The PCC2 trailer at payload offset `end` (COMPAT 21): u32 magic, u32
// count, then per entry u32 event index, u16 length, UTF-8 api_name. Each
// valid entry goes to name(index, s, len) in file order (a repeated index:
// the last entry wins, which is the sink's business). Nothing may follow.
template <class Src, class Sink>
void decode_flatbuf_trailer(Src &src, uint64_t n, uint64_t end, uint64_t count, Sink &&name) {
  uint64_t pos = end + 4;
  const uint32_t names = load_u32(src.at(pos, 4));
  pos += 4;
  // Each entry takes at least 6 bytes.
  if (names > (n - pos) / 6)
    fail(USCOPE_ERR_TRUNCATED, "pccx flatbuf PCC2 trailer declares %u names but only %" PRIu64 " bytes remain",
         names, n - pos);
  for (uint32_t k = 0; k < names; ++k) {
    if (n - pos < 6) fail(USCOPE_ERR_TRUNCATED, "pccx flatbuf PCC2 trailer ends inside entry %u", k);
    const uint8_t *e = src.at(pos, 6);
    const uint32_t idx = load_u32(e);
    const uint16_t len = load_u16(e + 4);
    pos += 6;
    if (len > n - pos)
      fail(USCOPE_ERR_TRUNCATED, "pccx flatbuf PCC2 trailer: name %u (%u bytes) runs past the payload", k, len);
    if (idx >= count)
      fail(USCOPE_ERR_CORRUPT, "pccx flatbuf PCC2 trailer: entry %u names event %u of %" PRIu64, k, idx, count);
    const char *s = reinterpret_cast<const char *>(src.at(pos, len));
    pos += len;
    if (!valid_utf8(s, len))
      fail(USCOPE_ERR_BAD_UTF8, "pccx flatbuf PCC2 trailer: name of event %u is not valid UTF-8", idx);
    name(idx, s, len);
  }
  if (pos != n)
    fail(USCOPE_ERR_CORRUPT, "pccx flatbuf payload has %" PRIu64 " trailing bytes after its PCC2 trailer",
         n - pos);
}

}  // namespace uscope::pccx
