// The reader handle behind uscope_reader_t, shared by the capi files that
// work over an open reader (reader_capi.cpp; the analysis handles, which read
// the file through it rather than opening it a second time).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "reader/trace_reader.hpp"
#include "uscope/uscope.h"

struct uscope_replay;

struct uscope_reader {
  uscope_reader(const char *path, uint32_t flags) : impl(path, flags) {}
  ~uscope_reader();  // detaches the cursors still open (reader_capi.cpp)
  uscope_reader(const uscope_reader &) = delete;
  uscope_reader &operator=(const uscope_reader &) = delete;
  uscope::TraceReader impl;
  // Bumped by every poll that changes the segment index: a replay cursor
  // made before it refuses to go on rather than mix two indexes.
  uint64_t generation = 0;
  // The replay cursors open on this reader (a list through the cursors), so
  // that closing the reader first leaves them failing cleanly, not dangling.
  uscope_replay *cursors = nullptr;
  // Buffers of the last iterators freed (events_in_range, segment_items),
  // handed to the next ones: an iterator per query or per segment then
  // reuses their capacity instead of growing fresh vectors (and faulting
  // their pages in) every time. Shared, because an item iterator may be
  // freed after its reader is closed.
  struct Spares {
    std::vector<uscope_event_t> events;
    std::vector<uint8_t> event_payloads;
    std::vector<uscope_item_t> items;
    std::vector<uint8_t> item_payloads;
  };
  std::shared_ptr<Spares> spares = std::make_shared<Spares>();
  std::string message;  // uscope_reader_error()
  // The summary arrays the caller asked for (uscope_reader_summary_density,
  // _counter_level), read from the file on first request and kept until
  // close: the pointers they return stay valid that long. A reader that is
  // never asked holds none of them (a summary grows with the trace).
  mutable std::map<uint32_t, std::vector<uint32_t>> density;
  mutable std::map<std::pair<uint32_t, uint32_t>, std::vector<uscope::MipmapEntry>> mipmap;
};
