// The reader handle behind uscope_reader_t, shared by the capi files that
// open something over a reader (the analysis handles of analysis.h): they
// reach the core TraceReader through impl, and leave messages where
// uscope_reader_error() reads them.
#pragma once

#include <string>

#include "reader/trace_reader.hpp"

struct uscope_reader {
  uscope_reader(const char *path, uint32_t flags) : impl(path, flags) {}
  uscope::TraceReader impl;
  std::string message;
};
