// Drive every entry point of the reader core (src/reader/trace_reader.hpp)
// over one file: open, replay of every segment, state_at at several times,
// events_in_range over the whole time axis and poll_new_segments. Shared by
// the golden-errors suite (tests/unit/test_reader_errors.cpp) and the
// libFuzzer target and its corpus replay (tests/fuzz/fuzz_reader.cpp), so
// that both hold the reader to the same contract: it either answers, or
// throws uscope::Error with a status; it never crashes, hangs or throws
// anything else.
//
// Header-only and free of GoogleTest, so that the fuzzer can use it.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "reader/trace_reader.hpp"

namespace uscope::test {

// What a successful run saw. Two files with the same trace content give the
// same digest whatever their byte layout (segment offsets are not hashed).
struct ReaderDigest {
  size_t segments = 0;
  uint64_t frames = 0, ops = 0, events = 0;
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a-64 over everything below
  bool operator==(const ReaderDigest &o) const {
    return segments == o.segments && frames == o.frames && ops == o.ops && events == o.events &&
           hash == o.hash;
  }
  bool operator!=(const ReaderDigest &o) const { return !(*this == o); }
};

namespace detail {

inline void mix(ReaderDigest &d, uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    d.hash ^= (v >> (8 * i)) & 0xFF;
    d.hash *= 0x100000001b3ull;
  }
}

// Read back every value of a state, up to a budget, so that a wrong layout
// offset shows up under the sanitizers. The budget keeps a hostile schema
// (thousands of fields, 65,535 slots) from turning one run into minutes.
inline void mix_states(ReaderDigest &d, const std::vector<StorageState> &states) {
  uint64_t budget = 1u << 14;
  for (const StorageState &s : states) {
    const StorageLayout &L = s.layout();
    mix(d, s.occupancy());
    for (uint32_t slot = 0; slot < L.num_slots && budget; ++slot) {
      mix(d, s.valid(static_cast<uint16_t>(slot)));
      if (!s.valid(static_cast<uint16_t>(slot))) continue;
      for (size_t f = 0; f < L.field_off.size() && budget; ++f, --budget)
        mix(d, s.get(static_cast<uint16_t>(slot), static_cast<uint16_t>(f)));
    }
    for (size_t p = 0; p < L.prop_off.size() && budget; ++p, --budget)
      mix(d, s.prop(static_cast<uint16_t>(p)));
  }
}

struct Counting {
  ReaderDigest &d;
  void frame(uint64_t t) {
    ++d.frames;
    mix(d, t);
  }
  void op(uint64_t t, const DeltaOp &o) {
    ++d.ops;
    mix(d, t);
    mix(d, uint64_t{o.action} | uint64_t{o.storage_id} << 8 | uint64_t{o.slot} << 24 |
               uint64_t{o.field} << 40);
    mix(d, o.value);
  }
  void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) {
    ++d.events;
    mix(d, t);
    mix(d, uint64_t{id} << 32 | n);
    for (uint32_t i = 0; i < n; ++i) mix(d, p[i]);
  }
};

}  // namespace detail

// Open path and drive the reader. Returns the digest; throws whatever the
// reader throws (uscope::Error for bad input, by contract).
// flags: TraceReader::kStrict or 0 (tolerant: defects are skipped and
// counted, and the whole-file check runs too).
inline ReaderDigest exercise_reader(const std::string &path, uint32_t flags = 0) {
  ReaderDigest d;
  TraceReader r(path, flags);
  const auto &segs = r.segments();
  d.segments = segs.size();
  for (const auto &s : segs) {
    detail::mix(d, s.header.time_start_ps);
    detail::mix(d, s.header.time_end_ps);
  }
  for (const auto &s : r.strings()) {
    detail::mix(d, s.size());
    for (char c : s) detail::mix(d, static_cast<uint8_t>(c));
  }
  if (r.summary()) detail::mix(d, r.summary()->total_instructions);

  // Every segment, replayed from its own checkpoint.
  for (size_t i = 0; i < segs.size(); ++i) {
    std::vector<StorageState> st = r.initial_state();
    r.replay(i, st, detail::Counting{d});
    detail::mix_states(d, st);
  }

  // state_at at 0, 1, the end of the trace, just after it, the largest
  // time, and at the start, start+1, middle and end of a sample of segments
  // (all of them for short traces; first, last and a few between otherwise).
  std::vector<uint64_t> times = {0, 1, r.header().total_time_ps, r.header().total_time_ps + 1,
                                 UINT64_MAX};
  const size_t n = segs.size(), step = n > 12 ? n / 6 : 1;
  for (size_t i = 0; i < n; i += step) {
    for (size_t j : {i, n - 1 - i}) {
      const SegmentHeader &h = segs[j].header;
      times.insert(times.end(), {h.time_start_ps, h.time_start_ps + 1,
                                 h.time_start_ps + (h.time_end_ps - h.time_start_ps) / 2, h.time_end_ps});
    }
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  for (uint64_t t : times) detail::mix_states(d, r.state_at(t));

  // Every event of the trace, then a sub-range, then an empty (inverted) one.
  for (const auto &range : {std::pair<uint64_t, uint64_t>{0, UINT64_MAX},
                            {n ? segs[n / 2].header.time_start_ps : 0, n ? segs[n - 1].header.time_start_ps : 0},
                            {2, 1}}) {
    const auto &ev = r.events_in_range(range.first, range.second);
    detail::mix(d, ev.size());
    for (const TimedEvent &e : ev) {
      detail::mix(d, e.time_ps);
      detail::mix(d, e.event_type_id);
      for (uint32_t k = 0; k < e.payload_size; ++k) detail::mix(d, e.payload[k]);
    }
  }

  // A file that does not change has no new segments (a finalized one is
  // re-read from its section table, which must give the same answer).
  const size_t before = segs.size();
  r.poll_new_segments();
  detail::mix(d, r.segments().size() == before);

  // The whole-file validation (uscope check), and what was skipped.
  r.check({});
  for (const DefectEntry &e : r.defects().entries()) {
    detail::mix(d, static_cast<uint64_t>(e.kind));
    detail::mix(d, e.count);
  }
  return d;
}

// The outcome of one run: USCOPE_OK with a digest, or the status and message
// of the uscope::Error thrown. Any other exception propagates: it is a bug.
struct ReaderOutcome {
  uscope_status_t status = USCOPE_OK;
  std::string message;
  ReaderDigest digest;
};

inline ReaderOutcome run_reader(const std::string &path, uint32_t flags = 0) {
  ReaderOutcome o;
  try {
    o.digest = exercise_reader(path, flags);
  } catch (const Error &e) {
    o.status = e.code();
    o.message = e.what();
  }
  return o;
}

// Run the reader over bytes held in memory: they go to an anonymous memfd
// that the reader opens as /proc/self/fd/N, so no file is left behind and the
// reader's own open/mmap path is the one exercised.
inline ReaderOutcome run_reader_on_bytes(const uint8_t *data, size_t size, uint32_t flags = 0) {
  const int fd = ::memfd_create("uscope-reader-input", MFD_CLOEXEC);
  if (fd < 0) fail(USCOPE_ERR_IO, "memfd_create failed");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  size_t done = 0;
  while (done < size) {
    const ssize_t k = ::write(fd, data + done, size - done);
    if (k <= 0) fail(USCOPE_ERR_IO, "write to memfd failed");
    done += static_cast<size_t>(k);
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  return run_reader(path, flags);
}

inline ReaderOutcome run_reader_on_bytes(const std::vector<uint8_t> &b, uint32_t flags = 0) {
  return run_reader_on_bytes(b.data(), b.size(), flags);
}

// The statuses the reader reports for bad input (uscope.h, -18 .. -22).
inline bool is_reader_input_error(uscope_status_t s) {
  return s == USCOPE_ERR_CORRUPT || s == USCOPE_ERR_TRUNCATED || s == USCOPE_ERR_BAD_MAGIC ||
         s == USCOPE_ERR_UNSUPPORTED_VERSION || s == USCOPE_ERR_UNKNOWN_COMPRESSION;
}

// The statuses a strict reader (TraceReader::kStrict) gives for a defect it
// would otherwise skip: each USCOPE_DEFECT_* kind's (defects.cpp).
inline bool is_strict_defect_error(uscope_status_t s) {
  if (s == USCOPE_ERR_UNKNOWN_PROPERTY) return true;  // field_out_of_range, of a property
  for (uint32_t k = 0; k < kDefectKinds; ++k)
    if (defect_info(k)->status == s) return true;
  return false;
}

}  // namespace uscope::test
