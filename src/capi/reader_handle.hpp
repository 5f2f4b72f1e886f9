// The reader handle behind uscope_reader_t, shared by the capi files that
// work over an open reader (reader_capi.cpp; the analysis handles, which read
// the file through it rather than opening it a second time).
#pragma once

#include <string>

#include "reader/trace_reader.hpp"
#include "uscope/uscope.h"

struct uscope_reader {
  uscope_reader(const char *path, uint32_t flags) : impl(path, flags) {}
  uscope::TraceReader impl;
  std::string message;  // uscope_reader_error()
};
