// SortedEventStream (src/pccx/pccx_stream.hpp) against the whole-file Reader:
// on every file, the same header and the Reader's events stably sorted by
// start, or the same error (status and message), whatever the memory budget
// and so whichever way the order is obtained (in memory, the sorted fast
// path, spilled runs with merge passes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "format/checksum.hpp"
#include "pccx/pccx.h"
#include "pccx/pccx_reader.hpp"
#include "pccx/pccx_stream.hpp"
#include "support/pccx_test_util.hpp"
#include "support/test_util.hpp"

using namespace uscope::test;
using uscope::pccx::Reader;
using uscope::pccx::SortedEvent;
using uscope::pccx::SortedEventStream;

namespace {

struct Ev {
  uint64_t index, start, duration;
  uint32_t core_id, type_id;
  std::string type_name;
  bool has_api;
  std::string api_name;
  bool operator==(const Ev &o) const {
    return index == o.index && start == o.start && duration == o.duration && core_id == o.core_id &&
           type_id == o.type_id && type_name == o.type_name && has_api == o.has_api && api_name == o.api_name;
  }
};

std::ostream &operator<<(std::ostream &os, const Ev &e) {
  return os << "#" << e.index << " start " << e.start << " dur " << e.duration << " core " << e.core_id << " type "
            << e.type_id << " " << e.type_name << " api " << (e.has_api ? e.api_name : "(none)");
}

struct Outcome {
  uscope_status_t status = USCOPE_OK;
  std::string message;
  pccx_header_t hdr{};
  std::string lab, isa, enc;
  std::vector<Ev> events;
  SortedEventStream::Stats stats{};
};

Outcome by_reader(const std::string &path, uint32_t flags) {
  Outcome o;
  Reader r;
  try {
    r.open_file(path, flags);
  } catch (const uscope::Error &e) {
    o.status = e.code();
    o.message = e.what();
    return o;
  }
  o.hdr = r.header();
  o.lab = o.hdr.pccx_lab_version;
  o.isa = o.hdr.isa_version;
  o.enc = o.hdr.encoding_name;
  o.events.reserve(r.event_count());
  for (uint64_t i = 0; i < r.event_count(); ++i) {
    pccx_event_t e{};
    r.event(i, &e);
    o.events.push_back(Ev{i, e.start_cycle, e.duration, e.core_id, e.type_id, e.type_name, e.api_name != nullptr,
                          e.api_name ? e.api_name : ""});
  }
  std::stable_sort(o.events.begin(), o.events.end(), [](const Ev &a, const Ev &b) { return a.start < b.start; });
  return o;
}

Outcome by_stream(const std::string &path, uint32_t flags, uint64_t budget) {
  Outcome o;
  SortedEventStream s(budget);
  try {
    s.open(path, flags);
    o.hdr = s.header();
    o.lab = o.hdr.pccx_lab_version;
    o.isa = o.hdr.isa_version;
    o.enc = o.hdr.encoding_name;
    o.stats = s.stats();
    o.events.reserve(s.event_count());
    SortedEvent e{};
    while (s.next(&e))
      o.events.push_back(Ev{e.index, e.start, e.duration, e.core_id, e.type_id, e.type_name, e.api_name != nullptr,
                            e.api_name ? e.api_name : ""});
  } catch (const uscope::Error &e) {
    o.status = e.code();
    o.message = e.what();
  }
  return o;
}

// Every field of the header but the string pointers, which are compared as strings.
void expect_same_header(const pccx_header_t &a, const pccx_header_t &b) {
  EXPECT_EQ(a.struct_size, b.struct_size);
  EXPECT_EQ(a.major, b.major);
  EXPECT_EQ(a.minor, b.minor);
  EXPECT_EQ(a.format_minor, b.format_minor);
  EXPECT_EQ(a.mac_rows, b.mac_rows);
  EXPECT_EQ(a.mac_cols, b.mac_cols);
  EXPECT_EQ(a.peak_tops, b.peak_tops);
  EXPECT_EQ(a.has_peak_tops, b.has_peak_tops);
  EXPECT_EQ(a.cores, b.cores);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.clock_mhz, b.clock_mhz);
  EXPECT_EQ(a.encoding, b.encoding);
  EXPECT_EQ(a.payload_bytes, b.payload_bytes);
  EXPECT_EQ(a.header_bytes, b.header_bytes);
  EXPECT_EQ(a.checksum_present, b.checksum_present);
  EXPECT_EQ(a.checksum_status, b.checksum_status);
  EXPECT_EQ(a.checksum, b.checksum);
  EXPECT_EQ(a.computed_checksum, b.computed_checksum);
  EXPECT_EQ(a.total_cycles, b.total_cycles);
  EXPECT_EQ(a.num_events, b.num_events);
  EXPECT_EQ(a.num_api_names, b.num_api_names);
  EXPECT_EQ(a.flatbuf_trailer, b.flatbuf_trailer);
  EXPECT_EQ(a.payload_trailing_bytes, b.payload_trailing_bytes);
}

// The stream gives what the Reader gives; returns the stream's stats.
SortedEventStream::Stats expect_same(const std::string &path, uint32_t flags, uint64_t budget) {
  SCOPED_TRACE(path + " flags " + std::to_string(flags) + " budget " + std::to_string(budget));
  const Outcome want = by_reader(path, flags);
  const Outcome got = by_stream(path, flags, budget);
  EXPECT_EQ(got.status, want.status) << got.message << " / Reader: " << want.message;
  EXPECT_EQ(got.message, want.message);
  if (want.status != USCOPE_OK || got.status != USCOPE_OK) return got.stats;
  expect_same_header(got.hdr, want.hdr);
  EXPECT_EQ(got.lab, want.lab);
  EXPECT_EQ(got.isa, want.isa);
  EXPECT_EQ(got.enc, want.enc);
  EXPECT_EQ(got.events.size(), want.events.size());
  const size_t n = std::min(got.events.size(), want.events.size());
  size_t bad = 0;
  for (size_t i = 0; i < n && bad < 5; ++i)
    if (!(got.events[i] == want.events[i])) {
      ++bad;
      ADD_FAILURE() << "event " << i << ": stream " << got.events[i] << ", Reader " << want.events[i];
    }
  return got.stats;
}

struct WEv {
  uint32_t core, type;
  uint64_t start, dur;
  const char *api;
};

void write_pccx(const std::string &path, uint32_t enc, const std::vector<WEv> &evs) {
  pccx_writer_options_t o = PCCX_WRITER_OPTIONS_INIT;
  o.encoding = enc;
  pccx_writer_t *w = nullptr;
  ASSERT_EQ(pccx_writer_open(&w, path.c_str(), &o), USCOPE_OK) << uscope_last_error();
  for (const WEv &e : evs) ASSERT_EQ(pccx_writer_event(w, e.core, e.start, e.dur, e.type, e.api), USCOPE_OK);
  ASSERT_EQ(pccx_writer_close(w), USCOPE_OK) << uscope_last_error();
}

const char *const kApis[] = {"uca_init", "uca_run", "uca_\xc3\xa9t\xc3\xa9", "", "uca_sync"};

// n events; starts from `start_of(i)`; every seventh an API_CALL with a name.
template <class F>
std::vector<WEv> make_events(size_t n, F start_of) {
  std::vector<WEv> v;
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const bool api = i % 7 == 3;
    v.push_back(WEv{uint32_t(i % 5), api ? uint32_t{PCCX_EVENT_API_CALL} : uint32_t(i % 6), start_of(i), i % 13,
                    api ? kApis[i % 5] : nullptr});
  }
  return v;
}

std::vector<WEv> shuffled_events(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  // Few distinct starts: many ties, which must keep file order.
  return make_events(n, [&](size_t) { return rng() % (n / 4 + 1); });
}

void write_file(const std::string &path, const std::vector<uint8_t> &b) {
  write_all(path, std::string(b.begin(), b.end()));
}

}  // namespace

TEST(PccxStream, DummyTraceMatchesReader) {
  ASSERT_TRUE(std::filesystem::exists(kPccxDummy)) << kPccxDummy;
  for (uint32_t flags : {0u, uint32_t{PCCX_OPEN_STRICT_CHECKSUM}})
    for (uint64_t budget : {uint64_t{64} << 20, uint64_t{64} << 10, uint64_t{4} << 10}) {
      const auto st = expect_same(kPccxDummy, flags, budget);
      if (budget == uint64_t{64} << 20) {
        EXPECT_EQ(st.runs, 0u);  // 16,008 events fit: nothing spilled
        EXPECT_EQ(st.decode_passes, 1u);
      } else if (budget == uint64_t{64} << 10) {
        // pccx-lab's layout is nearly in start order (about 130 events back
        // at most): past the buffer, a small heap orders it, no spill.
        EXPECT_FALSE(st.presorted);
        EXPECT_GT(st.window, 1u);
        EXPECT_LT(st.window, 1000u);
        EXPECT_EQ(st.runs, 0u);
      } else {
        EXPECT_GT(st.runs, 1u);  // 64 records: more disorder than the buffer holds
      }
    }
  const Outcome o = by_stream(kPccxDummy, PCCX_OPEN_STRICT_CHECKSUM, 64 << 20);
  ASSERT_EQ(o.status, USCOPE_OK) << o.message;
  EXPECT_EQ(o.events.size(), 16008u);  // COMPAT 23
  EXPECT_EQ(o.hdr.checksum_status, uint32_t{PCCX_CHECKSUM_OK});
}

TEST(PccxStream, FuzzCorpusMatchesReader) {
  // The reader's corpus and the CLI's (which holds what fuzzing found through
  // the converters: a JSON header of length 0 made the stream pass NULL to
  // simdjson, caught by UBSan).
  size_t files = 0;
  for (const char *sub : {"/pccx", "/cli_pccx"}) {
    const std::string dir = std::string(USCOPE_FUZZ_CORPUS_DIR) + sub;
    ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
    for (const auto &entry : std::filesystem::directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      ++files;
      for (uint32_t flags : {0u, uint32_t{PCCX_OPEN_STRICT_CHECKSUM}})
        for (uint64_t budget : {uint64_t{64} << 20, uint64_t{1} << 10})
          expect_same(entry.path().string(), flags, budget);
    }
  }
  EXPECT_GE(files, 10u);
}

// Writer files in both encodings, events out of start order (ties included),
// through each way of ordering: in memory, spilled runs, and a file sorted
// for the buffer's length and unsorted after it (decoded again into runs).
TEST(PccxStream, WriterFilesOutOfOrder) {
  TempDir d("pccx_stream");
  for (uint32_t enc : {uint32_t{PCCX_ENCODING_BINCODE}, uint32_t{PCCX_ENCODING_FLATBUF}}) {
    SCOPED_TRACE(enc);
    const std::string p = d.file("shuffled" + std::to_string(enc) + ".pccx");
    write_pccx(p, enc, shuffled_events(20000, 7 + enc));
    auto st = expect_same(p, PCCX_OPEN_STRICT_CHECKSUM, 64 << 20);
    EXPECT_FALSE(st.presorted);
    EXPECT_EQ(st.runs, 0u);  // fits the default budget: no spill
    EXPECT_EQ(st.decode_passes, 1u);
    st = expect_same(p, PCCX_OPEN_STRICT_CHECKSUM, 64 << 10);
    EXPECT_GT(st.runs, 1u);
    EXPECT_GT(st.spill_bytes, 0u);

    // Sorted for the first 10,000 events, then one event goes back in time.
    const std::string q = d.file("late" + std::to_string(enc) + ".pccx");
    auto late = make_events(12000, [](size_t i) { return uint64_t(i) * 3; });
    late[11000].start = 5;
    write_pccx(q, enc, late);
    st = expect_same(q, 0, 64 << 10);  // ~1,500 records fit
    EXPECT_FALSE(st.presorted);
    EXPECT_EQ(st.decode_passes, 2u);
    EXPECT_GT(st.runs, 1u);
  }
}

// A file in start order: no sort and no spill, whatever the budget; past the
// buffer the rest is decoded again as next() goes.
TEST(PccxStream, SortedFileIsNotSpilled) {
  TempDir d("pccx_stream");
  for (uint32_t enc : {uint32_t{PCCX_ENCODING_BINCODE}, uint32_t{PCCX_ENCODING_FLATBUF}}) {
    const std::string p = d.file("sorted" + std::to_string(enc) + ".pccx");
    write_pccx(p, enc, make_events(30000, [](size_t i) { return uint64_t(i / 3) * 2; }));  // ties too
    auto st = expect_same(p, PCCX_OPEN_STRICT_CHECKSUM, 64 << 10);
    EXPECT_TRUE(st.presorted);
    EXPECT_EQ(st.runs, 0u);
    EXPECT_EQ(st.spill_bytes, 0u);
    EXPECT_EQ(st.decode_passes, 2u);
    st = expect_same(p, PCCX_OPEN_STRICT_CHECKSUM, 64 << 20);
    EXPECT_TRUE(st.presorted);
    EXPECT_EQ(st.runs, 0u);
    EXPECT_EQ(st.decode_passes, 1u);
  }
}

// Over a million events through a 64 KiB budget: hundreds of runs, merged in
// several passes; order, count and content checked against the Reader.
TEST(PccxStream, SpillsMillionEventsWithTinyBudget) {
  TempDir d("pccx_stream");
  const std::string p = d.file("big.pccx");
  const size_t n = 1100000;
  write_pccx(p, PCCX_ENCODING_BINCODE, shuffled_events(n, 19));
  const auto st = expect_same(p, PCCX_OPEN_STRICT_CHECKSUM, 64 << 10);
  EXPECT_GT(st.runs, 100u);
  EXPECT_GE(st.merge_passes, 1u);

  // Order and count on their own, not only through the Reader.
  SortedEventStream s(64 << 10);
  s.open(p, 0);
  ASSERT_EQ(s.event_count(), n);
  SortedEvent e{}, prev{};
  uint64_t count = 0;
  std::vector<bool> seen(n);
  while (s.next(&e)) {
    if (count) {
      ASSERT_TRUE(prev.start < e.start || (prev.start == e.start && prev.index < e.index)) << count;
    }
    ASSERT_LT(e.index, n);
    ASSERT_FALSE(seen[e.index]);
    seen[e.index] = true;
    prev = e;
    ++count;
  }
  EXPECT_EQ(count, n);
  EXPECT_FALSE(s.next(&e));  // stays at the end
}

// Every truncation of a small file of each encoding, and single-byte
// corruptions all over it: the same status and message as the Reader.
TEST(PccxStream, TruncatedAndCorruptFilesFailAsReader) {
  TempDir d("pccx_stream");
  for (uint32_t enc : {uint32_t{PCCX_ENCODING_BINCODE}, uint32_t{PCCX_ENCODING_FLATBUF}}) {
    SCOPED_TRACE(enc);
    const std::string src = d.file("src" + std::to_string(enc) + ".pccx");
    write_pccx(src, enc, shuffled_events(40, 3));
    const std::vector<uint8_t> whole = read_bytes(src);
    ASSERT_GT(whole.size(), 100u);
    const std::string p = d.file("cut.pccx");
    for (size_t len = 0; len < whole.size(); ++len) {
      write_file(p, std::vector<uint8_t>(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(len)));
      expect_same(p, 0, 1 << 10);
      expect_same(p, PCCX_OPEN_STRICT_CHECKSUM, 1 << 10);
    }
    std::mt19937 rng(11 + enc);
    for (size_t k = 0; k < 150; ++k) {
      std::vector<uint8_t> b = whole;
      b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
      if (k % 3 == 0) b[rng() % b.size()] = 0xff;
      write_file(p, b);
      expect_same(p, 0, 1 << 10);
      expect_same(p, PCCX_OPEN_STRICT_CHECKSUM, 64 << 20);
    }
  }
}

// Hand-made payloads the writer never produces: unknown bincode type names
// (interned), bad option tags and UTF-8, and a PCC2 trailer with a repeated
// index, a bad index, and bytes after it; a strict checksum error outranks a
// payload error, as in the Reader (which checks the checksum first).
TEST(PccxStream, HostilePayloadsFailAsReader) {
  TempDir d("pccx_stream");
  const std::string p = d.file("h.pccx");
  auto check = [&](const std::vector<uint8_t> &payload, const std::string &enc, bool good_sum) {
    const uint64_t sum = uscope::fnv1a64(payload.data(), payload.size());
    write_file(p, pccx_file(pccx_json(enc, payload.size(), std::to_string(good_sum ? sum : sum + 1)), payload));
    // Budget 0: the smallest sort buffer, so small payloads spill and merge too.
    for (uint32_t flags : {0u, uint32_t{PCCX_OPEN_STRICT_CHECKSUM}})
      for (uint64_t budget : {uint64_t{64} << 20, payload.size() < 100000 ? uint64_t{0} : uint64_t{1} << 20})
        expect_same(p, flags, budget);
  };
  auto bincode = [](uint8_t tag, const std::string &type, const std::string &api, uint32_t count = 200) {
    std::vector<uint8_t> b;
    put_u64(b, 1000);
    put_u64(b, count);
    for (uint32_t i = 0; i < count; ++i) {
      put_u32(b, i);
      put_u64(b, (i * 7919u) % 97);
      put_u64(b, 1);
      put_str(b, i % 3 ? type : "MAC_COMPUTE");
      if (i == count * 3 / 4) {
        b.push_back(tag);
        if (tag == 1) put_str(b, api);
      } else {
        b.push_back(0);
      }
    }
    return b;
  };
  for (bool good : {true, false}) {
    check(bincode(1, "FANCY_NEW_TYPE", "uca_x"), "bincode", good);
    check(bincode(2, "FANCY_NEW_TYPE", "uca_x"), "bincode", good);
    check(bincode(1, "FANCY_NEW_TYPE", "bad\xff"), "bincode", good);
    check(bincode(1, "BAD\xc3", "uca"), "bincode", good);
    // Over 8 MiB: hashed on a second thread while the first decodes.
    check(bincode(1, "FANCY_NEW_TYPE", "uca_x", 300000), "bincode", good);
    check(bincode(3, "FANCY_NEW_TYPE", "uca_x", 300000), "bincode", good);
    auto trailing = bincode(0, "DMA_READ", "");
    trailing.push_back(7);
    check(trailing, "bincode", good);
  }
  auto flatbuf = [](const std::vector<std::pair<uint32_t, std::string>> &names, size_t extra) {
    std::vector<uint8_t> b;
    for (uint32_t i = 0; i < 300; ++i) {
      put_u32(b, i % 4);
      put_u64(b, (i * 31u) % 101);
      put_u64(b, 2);
      put_u32(b, i % 9);  // ids >= 7: "UNKNOWN", id kept
    }
    put_u32(b, 0x32434350u);
    put_u32(b, static_cast<uint32_t>(names.size()));
    for (const auto &[idx, s] : names) {
      put_u32(b, idx);
      put_u16(b, static_cast<uint16_t>(s.size()));
      b.insert(b.end(), s.begin(), s.end());
    }
    b.insert(b.end(), extra, 0);
    return b;
  };
  for (bool good : {true, false}) {
    check(flatbuf({{5, "a"}, {299, "z"}, {5, "again"}, {17, ""}, {3, "a"}}, 0), "flatbuf", good);
    check(flatbuf({{5, "a"}, {300, "z"}}, 0), "flatbuf", good);
    check(flatbuf({{5, "a\xff"}}, 0), "flatbuf", good);
    check(flatbuf({{5, "a"}}, 3), "flatbuf", good);
    auto partial = flatbuf({}, 0);
    partial.resize(300 * 24 + 13);  // no trailer: a partial last record, ignored
    check(partial, "flatbuf", good);
  }
  // raw and unknown encodings: no events, the checksum still computed.
  check(std::vector<uint8_t>(1000, 0x5a), "raw", true);
  check(std::vector<uint8_t>(10, 1), "zstd", false);
}

TEST(PccxStream, MissingFileAndBadFlags) {
  TempDir d("pccx_stream");
  expect_same(d.file("absent.pccx"), 0, 64 << 20);
  expect_same(d.path(), 0, 64 << 20);  // a directory
  expect_same(kPccxDummy, 0x80, 64 << 20);
  SortedEventStream s;
  EXPECT_EQ(error_code([&] { s.open(kPccxDummy, 0x80); }), USCOPE_ERR_INVALID_ARGUMENT);
  SortedEvent e{};
  EXPECT_FALSE(s.next(&e));  // a failed open leaves no events
}

// Events written as they complete (start = end - duration, ends in order):
// nearly in start order. Past the sort buffer they are ordered through a
// small heap, without a spill; an event far back in time late in the file
// turns that into the spilled merge.
TEST(PccxStream, NearlySortedFileUsesHeapWindow) {
  TempDir d("pccx_stream");
  for (uint32_t enc : {uint32_t{PCCX_ENCODING_BINCODE}, uint32_t{PCCX_ENCODING_FLATBUF}}) {
    SCOPED_TRACE(enc);
    auto evs = make_events(30000, [](size_t) { return uint64_t{0}; });
    for (size_t i = 0; i < evs.size(); ++i) {
      const uint64_t end = 1000 + 2 * uint64_t(i);
      evs[i].dur = (i * 7919) % 300;  // up to ~150 events in flight
      evs[i].start = end - evs[i].dur;
    }
    const std::string p = d.file("nearly" + std::to_string(enc) + ".pccx");
    write_pccx(p, enc, evs);
    for (uint64_t budget : {uint64_t{64} << 10, uint64_t{1} << 20}) {
      const auto st = expect_same(p, PCCX_OPEN_STRICT_CHECKSUM, budget);
      EXPECT_FALSE(st.presorted);
      EXPECT_GT(st.window, 1u);
      EXPECT_LT(st.window, st.sort_capacity);
      EXPECT_EQ(st.runs, 0u);
      EXPECT_EQ(st.spill_bytes, 0u);
    }
    // The smallest buffer (64 records) cannot hold ~150 in flight: spilled.
    auto st = expect_same(p, 0, 0);
    EXPECT_EQ(st.window, 0u);
    EXPECT_GT(st.runs, 1u);

    evs[25000].start = 3;  // far back, late in the file
    const std::string q = d.file("nearly_late" + std::to_string(enc) + ".pccx");
    write_pccx(q, enc, evs);
    st = expect_same(q, 0, 64 << 10);
    EXPECT_EQ(st.window, 0u);
    EXPECT_GT(st.runs, 1u);
    EXPECT_EQ(st.decode_passes, 2u);
  }
}
