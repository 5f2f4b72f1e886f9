// .pccx events in time order with bounded memory, for the converters that
// stream a whole file (pccx -> µScope, pccx -> JSON-Lines).
//
// The Reader (pccx_reader.hpp) keeps the whole file and every decoded event
// for the C API's random access; this stream keeps neither. open() reads the
// file once with pread() in bounded windows, validating it exactly as
// Reader::open_file does (same statuses, same messages: the same parsers and
// decoders, pccx_decode.hpp), while a second thread hashes the payload for
// its checksum (payloads from 8 MiB; FNV-1a runs at about 0.6 GB/s, as slow
// as the decoding). It keeps events as 40-byte records in a sort buffer of
// about memory_budget bytes, and then:
//  - all records fit (the common case): sorted in memory, nothing spilled;
//  - the file is in start order (starts never decrease): the records that
//    fit are served, then the rest is decoded again as next() goes;
//  - the file is nearly in start order (every event has fewer than H earlier
//    events with a later start, H within the budget; e.g. events written as
//    they complete): decoded again by next() through a min-heap of H records;
//  - otherwise an external merge sort: full buffers are sorted and spilled as
//    runs to an unlinked temporary file in $TMPDIR (or /tmp), and next()
//    merges the runs (in several passes when there are more runs than the
//    budget gives a 4 KiB read buffer each). A flatbuf file's api names come
//    after its records (the PCC2 trailer), so its runs are made by a second
//    decoding, which knows them; so are the runs after the buffer of a file
//    found out of order only after the buffer filled.
// Only the last case writes a temporary file (about 40 bytes an event, more
// with merge passes) or sorts more than the buffer.
// Memory: about memory_budget (never less than a few KiB), plus each distinct
// type/api name string once (interned), plus the JSON header while open()
// parses it (at most 64 MiB, the format's bound), plus, for a flatbuf file
// with a PCC2 trailer, 8 bytes per named event (the trailer's index -> name
// map, joined with the records in index order).
//
// A file rewritten between open() and the end of next() is read as it is
// then (the second decoding validates again: errors, not garbage).
// Not thread-safe; one stream per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "pccx/pccx.h"

namespace uscope::pccx {

struct SortedEvent {
  uint64_t index;             // position in the file's event array
  uint64_t start, duration;   // start_cycle, duration_cycles
  uint32_t core_id, type_id;  // as pccx_event_t (pccx.h)
  const char *type_name;      // as pccx_event_t.type_name: the file's unknown bincode name, else the table name
  const char *api_name;       // NULL when absent; both strings stay valid for the stream's lifetime (interned)
};

class SortedEventStream {
 public:
  // file_order: serve the events in the file's order instead (by index):
  // what pccx-lab's own exporters iterate (src/export/chrome_json_pccx_lab.cpp);
  // that order needs no sort, so the buffer is only a window.
  explicit SortedEventStream(uint64_t memory_budget = 64ull << 20, bool file_order = false);
  ~SortedEventStream();
  SortedEventStream(const SortedEventStream &) = delete;
  SortedEventStream &operator=(const SortedEventStream &) = delete;

  // Open and validate path (see above). Throws uscope::Error, whose message
  // names the path. A second open() starts over with the new file.
  void open(const std::string &path, uint32_t flags);
  const pccx_header_t &header() const;  // same content as Reader::header()
  uint64_t event_count() const;
  // The next event in ascending (start, index) order (file_order: index
  // order); false at the end.
  // Throws uscope::Error on I/O errors (including a file that shrank).
  bool next(SortedEvent *out);

  // How the order is obtained, for tests and reports.
  struct Stats {
    bool presorted;         // starts never decrease in the file
    uint64_t sort_capacity; // records the sort buffer holds
    uint64_t runs;          // sorted runs spilled (0: nothing spilled)
    uint64_t merge_passes;  // intermediate merge passes before the final merge
    uint64_t spill_bytes;   // bytes written to the temporary file
    uint64_t decode_passes; // 1, or 2 when part of the payload is decoded again
    uint64_t window;        // nearly ordered: records of the heap that orders them (0: not used)
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uscope::pccx
