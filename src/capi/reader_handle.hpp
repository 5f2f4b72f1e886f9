// The reader handle behind uscope_reader_t, shared by the capi files that
// work over an open reader (reader_capi.cpp; the analysis handles, which read
// the file through it rather than opening it a second time).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reader/trace_reader.hpp"
#include "uscope/uscope.h"

struct uscope_reader {
  uscope_reader(const char *path, uint32_t flags) : impl(path, flags) {}
  uscope::TraceReader impl;
  std::string message;  // uscope_reader_error()
  // The summary arrays the caller asked for (uscope_reader_summary_density,
  // _counter_level), read from the file on first request and kept until
  // close: the pointers they return stay valid that long. A reader that is
  // never asked holds none of them (a summary grows with the trace).
  mutable std::map<uint32_t, std::vector<uint32_t>> density;
  mutable std::map<std::pair<uint32_t, uint32_t>, std::vector<uscope::MipmapEntry>> mipmap;
};
