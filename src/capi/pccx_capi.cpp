// extern "C" pccx API (include/pccx/pccx.h). Open/close/finish run through
// guard(); the writer's per-event calls are noexcept and need none.
#include <cstring>
#include <new>

#include "capi/guard.hpp"
#include "pccx/pccx.h"
#include "pccx/pccx_common.hpp"
#include "pccx/pccx_reader.hpp"
#include "pccx/pccx_writer.hpp"

struct pccx_reader {
  uscope::pccx::Reader impl;
};

using uscope::guard;

namespace {
uscope_status_t null_handle(const char *fn) {
  std::string m = std::string(fn) + ": handle is NULL";
  uscope::set_thread_error(m.c_str());
  return USCOPE_ERR_INVALID_ARGUMENT;
}

uscope_status_t open_reader(pccx_reader_t **out, uint32_t flags, const char *fn,
                            void (*fill)(uscope::pccx::Reader &, uint32_t, const void *, size_t),
                            const void *a, size_t n) {
  return guard([&] {
    USCOPE_CHECK_ARG(out, "%s: out is NULL", fn);
    auto *r = new pccx_reader();
    try {
      fill(r->impl, flags, a, n);
    } catch (...) {
      delete r;
      throw;
    }
    *out = r;
    return USCOPE_OK;
  });
}
}  // namespace

extern "C" {

USCOPE_API uscope_status_t pccx_reader_open(pccx_reader_t **out, const char *path, uint32_t flags) {
  if (!path) {
    uscope::set_thread_error("pccx_reader_open: path is NULL");
    return USCOPE_ERR_INVALID_ARGUMENT;
  }
  return open_reader(
      out, flags, "pccx_reader_open",
      [](uscope::pccx::Reader &r, uint32_t f, const void *p, size_t) {
        r.open_file(static_cast<const char *>(p), f);
      },
      path, 0);
}

USCOPE_API uscope_status_t pccx_reader_open_memory(pccx_reader_t **out, const void *data,
                                                   size_t size, uint32_t flags) {
  if (!data && size) {
    uscope::set_thread_error("pccx_reader_open_memory: data is NULL");
    return USCOPE_ERR_INVALID_ARGUMENT;
  }
  static const uint8_t empty = 0;
  return open_reader(
      out, flags, "pccx_reader_open_memory",
      [](uscope::pccx::Reader &r, uint32_t f, const void *p, size_t n) { r.open_memory(p, n, f); },
      data ? data : &empty, size);
}

USCOPE_API void pccx_reader_close(pccx_reader_t *r) { delete r; }

USCOPE_API const char *pccx_reader_error(const pccx_reader_t *r) {
  return r ? r->impl.last_error.c_str() : "";
}

USCOPE_API uscope_status_t pccx_reader_header(const pccx_reader_t *r, pccx_header_t *out) {
  if (!r) return null_handle("pccx_reader_header");
  if (!out || out->struct_size < offsetof(pccx_header_t, pccx_lab_version)) {
    uscope::set_thread_error("pccx_reader_header: out is NULL or its struct_size is too small");
    return USCOPE_ERR_INVALID_ARGUMENT;
  }
  const pccx_header_t &h = r->impl.header();
  const uint32_t n = out->struct_size < sizeof(h) ? out->struct_size : uint32_t(sizeof(h));
  std::memcpy(out, &h, n);
  out->struct_size = n;
  return USCOPE_OK;
}

USCOPE_API const char *pccx_reader_header_json(const pccx_reader_t *r, size_t *len) {
  if (!r || !len) return nullptr;
  *len = r->impl.json_size();
  return r->impl.json();
}

USCOPE_API uint64_t pccx_reader_event_count(const pccx_reader_t *r) {
  return r ? r->impl.event_count() : 0;
}

USCOPE_API uscope_status_t pccx_reader_event(const pccx_reader_t *r, pccx_event_t *out, uint64_t index) {
  if (!r) return null_handle("pccx_reader_event");
  if (!out) {
    uscope::set_thread_error("pccx_reader_event: out is NULL");
    return USCOPE_ERR_INVALID_ARGUMENT;
  }
  if (index >= r->impl.event_count()) {
    uscope::set_thread_error("pccx_reader_event: index out of range");
    return USCOPE_ERR_NOT_FOUND;
  }
  r->impl.event(index, out);
  return USCOPE_OK;
}

USCOPE_API uscope_status_t pccx_reader_payload(const pccx_reader_t *r, const uint8_t **data,
                                               uint64_t *len) {
  if (!r) return null_handle("pccx_reader_payload");
  if (!data || !len) {
    uscope::set_thread_error("pccx_reader_payload: data or len is NULL");
    return USCOPE_ERR_INVALID_ARGUMENT;
  }
  *data = r->impl.payload();
  *len = r->impl.header().payload_bytes;
  return USCOPE_OK;
}

USCOPE_API uscope_status_t pccx_writer_open(pccx_writer_t **out, const char *path,
                                            const pccx_writer_options_t *opts) {
  return guard([&] {
    USCOPE_CHECK_ARG(out, "pccx_writer_open: out is NULL");
    USCOPE_CHECK_ARG(path, "pccx_writer_open: path is NULL");
    *out = new pccx_writer(path, opts);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t pccx_writer_event(pccx_writer_t *w, uint32_t core_id, uint64_t start_cycle,
                                             uint64_t duration, uint32_t type_id, const char *api_name) {
  if (!w) return null_handle("pccx_writer_event");
  return w->impl.event(core_id, start_cycle, duration, type_id, api_name);
}

USCOPE_API uscope_status_t pccx_writer_raw(pccx_writer_t *w, const void *data, size_t n) {
  if (!w) return null_handle("pccx_writer_raw");
  return w->impl.raw(data, n);
}

USCOPE_API uscope_status_t pccx_writer_set_total_cycles(pccx_writer_t *w, uint64_t cycles) {
  if (!w) return null_handle("pccx_writer_set_total_cycles");
  return w->impl.set_total_cycles(cycles);
}

USCOPE_API uscope_status_t pccx_writer_stats(const pccx_writer_t *w, pccx_writer_stats_t *out) {
  if (!w) return null_handle("pccx_writer_stats");
  if (!out || out->struct_size < 8) {
    uscope::set_thread_error("pccx_writer_stats: out is NULL or its struct_size is too small");
    return USCOPE_ERR_INVALID_ARGUMENT;
  }
  w->impl.stats(out);
  return USCOPE_OK;
}

USCOPE_API uscope_status_t pccx_writer_finish(pccx_writer_t *w) {
  if (!w) return null_handle("pccx_writer_finish");
  return guard([&] {
    const uscope_status_t s = w->impl.finish();
    if (s != USCOPE_OK) uscope::set_thread_error(w->impl.error());
    return s;
  });
}

USCOPE_API uscope_status_t pccx_writer_close(pccx_writer_t *w) {
  if (!w) return USCOPE_OK;
  const uscope_status_t s = pccx_writer_finish(w);
  delete w;
  return s;
}

USCOPE_API const char *pccx_writer_error(const pccx_writer_t *w) { return w ? w->impl.error() : ""; }

}  // extern "C"
