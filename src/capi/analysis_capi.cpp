// extern "C" cpu analysis (include/uscope/analysis.h): thin wrappers over
// uscope::analysis::CpuTrace.
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/cpu_trace.hpp"
#include "analysis/elf_info.hpp"
#include "capi/guard.hpp"
#include "capi/reader_handle.hpp"
#include "uscope/analysis.h"

struct uscope_cpu_trace {
  uscope_cpu_trace(uscope_reader_t *r, const uscope_cpu_trace_options_t &o) : impl(r->impl, o) {}
  uscope::analysis::CpuTrace impl;
  uscope::analysis::CpuTrace::Report report;
};

struct uscope_buffer_state {
  uscope::analysis::BufferSnapshot snap;
};

struct uscope_insn_iter {
  uscope_insn_iter(uscope_cpu_trace_t *t, uint64_t start, uint64_t end, std::optional<uint32_t> entity)
      : trace(t), stream(t->impl, start, end, entity) {}
  uscope_cpu_trace_t *trace;
  uscope::analysis::InsnStream stream;
  std::string disasm, annotations, function, file;
};

namespace {

using uscope::fail;

#define NEED(cond, ...) USCOPE_CHECK_ARG(cond, __VA_ARGS__)

// An older, shorter options struct leaves the newer fields zero.
uscope_cpu_trace_options_t copy_options(const uscope_cpu_trace_options_t *o) {
  uscope_cpu_trace_options_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  if (!o) return c;
  if (o->struct_size < sizeof(uint32_t) || o->struct_size > sizeof c)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "options->struct_size is %u; this library knows %zu (set it to sizeof)",
         o->struct_size, sizeof c);
  std::memcpy(&c, o, o->struct_size);
  return c;
}

void check_counter(const uscope_cpu_trace_t *t, uint32_t c) {
  if (c >= t->impl.counters().size())
    fail(USCOPE_ERR_NOT_FOUND, "counter %u: the trace has %zu", c, t->impl.counters().size());
}

const uscope::analysis::BufferSnapshot::Buffer &buffer_of(const uscope_buffer_state_t *s, uint32_t b) {
  if (b >= s->snap.buffers.size())
    fail(USCOPE_ERR_NOT_FOUND, "buffer %u: the trace has %zu", b, s->snap.buffers.size());
  return s->snap.buffers[b];
}

}  // namespace

extern "C" {

USCOPE_API uscope_status_t uscope_cpu_trace_open(uscope_cpu_trace_t **out, uscope_reader_t *reader,
                                                 const uscope_cpu_trace_options_t *opts) {
  return uscope::guard([&] {
    NEED(out && reader, "uscope_cpu_trace_open: NULL argument");
    const auto o = copy_options(opts);
    *out = new uscope_cpu_trace(reader, o);
    return USCOPE_OK;
  });
}

USCOPE_API void uscope_cpu_trace_close(uscope_cpu_trace_t *t) { delete t; }

USCOPE_API uscope_status_t uscope_cpu_trace_info(const uscope_cpu_trace_t *t, uscope_cpu_trace_info_t *out) {
  return uscope::guard([&] {
    NEED(t && out, "uscope_cpu_trace_info: NULL argument");
    NEED(out->struct_size >= sizeof(uint32_t) && out->struct_size <= sizeof *out,
         "uscope_cpu_trace_info: out->struct_size is %u (set it to sizeof)", out->struct_size);
    uscope_cpu_trace_info_t i;
    std::memset(&i, 0, sizeof i);
    const auto &c = t->impl;
    auto &r = const_cast<uscope::analysis::CpuTrace &>(c).reader();
    i.struct_size = out->struct_size;
    i.segment_count = static_cast<uint32_t>(r.segments().size());
    i.total_instructions = r.summary() ? r.summary()->total_instructions : 0;
    i.max_cycle = c.max_cycle();
    i.period_ps = c.period_ps();
    i.num_stages = static_cast<uint32_t>(c.stage_names().size());
    i.num_counters = static_cast<uint32_t>(c.counters().size());
    i.num_buffers = static_cast<uint32_t>(c.buffers().size());
    i.num_metadata = static_cast<uint32_t>(c.metadata().size());
    i.version = c.version().c_str();
    i.scope_name = c.scope_name().c_str();
    i.isa = c.isa().c_str();
    i.elf_path = c.elf_path().c_str();
    i.has_symbols = const_cast<uscope::analysis::CpuTrace &>(c).elf() &&
                            const_cast<uscope::analysis::CpuTrace &>(c).elf()->has_symbols();
    i.elf_note = c.elf_note().c_str();
    std::memcpy(out, &i, out->struct_size);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_stage(const uscope_cpu_trace_t *t, const char **name, uint32_t index) {
  return uscope::guard([&] {
    NEED(t && name, "uscope_cpu_trace_stage: NULL argument");
    if (index >= t->impl.stage_names().size())
      fail(USCOPE_ERR_NOT_FOUND, "stage %u: the pipeline has %zu", index, t->impl.stage_names().size());
    *name = t->impl.stage_names()[index].c_str();
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_metadata(const uscope_cpu_trace_t *t, const char **key,
                                                     const char **value, uint32_t index) {
  return uscope::guard([&] {
    NEED(t && key && value, "uscope_cpu_trace_metadata: NULL argument");
    if (index >= t->impl.metadata().size())
      fail(USCOPE_ERR_NOT_FOUND, "metadata %u: there are %zu", index, t->impl.metadata().size());
    *key = t->impl.metadata()[index].first.c_str();
    *value = t->impl.metadata()[index].second.c_str();
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_counter(const uscope_cpu_trace_t *t, uscope_counter_info_t *out,
                                                    uint32_t index) {
  return uscope::guard([&] {
    NEED(t && out, "uscope_cpu_trace_counter: NULL argument");
    check_counter(t, index);
    const auto &c = t->impl.counters()[index];
    *out = {c.name.c_str(), c.storage_id, 0, c.tsum_index};
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_find_counter(const uscope_cpu_trace_t *t, uint32_t *index,
                                                         const char *name) {
  return uscope::guard([&] {
    NEED(t && index && name, "uscope_cpu_trace_find_counter: NULL argument");
    *index = t->impl.find_counter(name);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_counter_value(uscope_cpu_trace_t *t, uint64_t *value, uint32_t counter,
                                                          uint64_t cycle) {
  return uscope::guard([&] {
    NEED(t && value, "uscope_cpu_trace_counter_value: NULL argument");
    check_counter(t, counter);
    *value = t->impl.counter_value(counter, cycle);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_counter_delta(uscope_cpu_trace_t *t, uint64_t *delta, uint32_t counter,
                                                          uint64_t cycle) {
  return uscope::guard([&] {
    NEED(t && delta, "uscope_cpu_trace_counter_delta: NULL argument");
    check_counter(t, counter);
    uint64_t v[2] = {0, 0};
    if (cycle == 0) v[1] = t->impl.counter_value(counter, 0);
    else t->impl.counter_series(counter, cycle - 1, 2, v);
    *delta = v[1] - v[0];
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_counter_rate(uscope_cpu_trace_t *t, double *rate, uint32_t counter,
                                                         uint64_t cycle, uint64_t window) {
  return uscope::guard([&] {
    NEED(t && rate, "uscope_cpu_trace_counter_rate: NULL argument");
    NEED(window > 0, "uscope_cpu_trace_counter_rate: window must be > 0");
    check_counter(t, counter);
    const uint64_t from = cycle >= window ? cycle - window : 0;
    const uint64_t a = t->impl.counter_value(counter, from), b = t->impl.counter_value(counter, cycle);
    *rate = cycle > from ? static_cast<double>(b - a) / static_cast<double>(cycle - from) : 0.0;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_counter_series(uscope_cpu_trace_t *t, uint64_t *values, uint32_t counter,
                                                           uint64_t start, uint64_t count) {
  return uscope::guard([&] {
    NEED(t && (values || !count), "uscope_cpu_trace_counter_series: NULL argument");
    check_counter(t, counter);
    NEED(start + count >= start, "uscope_cpu_trace_counter_series: start + count overflows");
    t->impl.counter_series(counter, start, count, values);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_counter_downsample(uscope_cpu_trace_t *t, uscope_counter_bucket_t *buckets,
                                                               int *exact, uint32_t counter, uint64_t start,
                                                               uint64_t end, uint32_t n) {
  return uscope::guard([&] {
    NEED(t && buckets, "uscope_cpu_trace_counter_downsample: NULL argument");
    check_counter(t, counter);
    const bool e = t->impl.counter_downsample(counter, start, end, n, buckets);
    if (exact) *exact = e ? 1 : 0;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_buffer(const uscope_cpu_trace_t *t, uscope_buffer_info_t *out,
                                                   uint32_t index) {
  return uscope::guard([&] {
    NEED(t && out, "uscope_cpu_trace_buffer: NULL argument");
    const auto &bufs = t->impl.buffers();
    if (index >= bufs.size()) fail(USCOPE_ERR_NOT_FOUND, "buffer %u: the trace has %zu", index, bufs.size());
    auto &r = const_cast<uscope::analysis::CpuTrace &>(t->impl).reader();
    const uscope::StorageDef *def = nullptr;
    for (const auto &d : r.schema().storages)
      if (d.storage_id == bufs[index].storage_id) def = &d;
    *out = {bufs[index].name.c_str(), bufs[index].storage_id, def->num_slots,
            static_cast<uint16_t>(def->fields.size()), static_cast<uint16_t>(def->props.size())};
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_find_buffer(const uscope_cpu_trace_t *t, uint32_t *index,
                                                        const char *name) {
  return uscope::guard([&] {
    NEED(t && index && name, "uscope_cpu_trace_find_buffer: NULL argument");
    *index = t->impl.find_buffer(name);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_buffer_occupancy(uscope_cpu_trace_t *t, uint32_t *occupied,
                                                             uint32_t buffer, uint64_t start, uint64_t count) {
  return uscope::guard([&] {
    NEED(t && (occupied || !count), "uscope_cpu_trace_buffer_occupancy: NULL argument");
    if (buffer >= t->impl.buffers().size())
      fail(USCOPE_ERR_NOT_FOUND, "buffer %u: the trace has %zu", buffer, t->impl.buffers().size());
    NEED(start + count >= start, "uscope_cpu_trace_buffer_occupancy: start + count overflows");
    t->impl.buffer_occupancy(buffer, start, count, occupied);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_buffers_at(uscope_cpu_trace_t *t, uscope_buffer_state_t **out,
                                                       uint64_t cycle) {
  return uscope::guard([&] {
    NEED(t && out, "uscope_cpu_trace_buffers_at: NULL argument");
    auto s = std::make_unique<uscope_buffer_state>();
    t->impl.buffers_at(cycle, s->snap);
    *out = s.release();
    return USCOPE_OK;
  });
}

USCOPE_API void uscope_buffer_state_free(uscope_buffer_state_t *s) { delete s; }

USCOPE_API uscope_status_t uscope_buffer_state_fill(const uscope_buffer_state_t *s, uscope_buffer_fill_t *out,
                                                    uint32_t buffer) {
  return uscope::guard([&] {
    NEED(s && out, "uscope_buffer_state_fill: NULL argument");
    const auto &b = buffer_of(s, buffer);
    out->capacity = b.capacity;
    out->occupied = static_cast<uint32_t>(b.slots.size());
    out->fill_percent = b.capacity ? 100.0 * static_cast<double>(b.slots.size()) / b.capacity : 0.0;
    out->num_properties = static_cast<uint32_t>(b.props.size());
    out->num_pairs = static_cast<uint32_t>(b.pairs.size());
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_buffer_state_slot(const uscope_buffer_state_t *s, uscope_buffer_slot_t *out,
                                                    uint32_t buffer, uint32_t i) {
  return uscope::guard([&] {
    NEED(s && out, "uscope_buffer_state_slot: NULL argument");
    const auto &b = buffer_of(s, buffer);
    if (i >= b.slots.size()) fail(USCOPE_ERR_NOT_FOUND, "occupied slot %u: the buffer has %zu", i, b.slots.size());
    const auto &sl = b.slots[i];
    out->slot = sl.slot;
    out->num_fields = static_cast<uint32_t>(sl.fields.size());
    out->fields = sl.fields.data();
    out->has_entity = sl.has_entity ? 1 : 0;
    out->num_entity_fields = static_cast<uint32_t>(sl.entity_fields.size());
    out->entity_fields = sl.entity_fields.data();
    out->entity_field_names = s->snap.entity_field_ptrs.data();
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_buffer_state_property(const uscope_buffer_state_t *s, uscope_buffer_property_t *out,
                                                        uint32_t buffer, uint32_t i) {
  return uscope::guard([&] {
    NEED(s && out, "uscope_buffer_state_property: NULL argument");
    const auto &b = buffer_of(s, buffer);
    if (i >= b.props.size()) fail(USCOPE_ERR_NOT_FOUND, "property %u: the buffer has %zu", i, b.props.size());
    *out = b.props[i];
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_buffer_state_pair(const uscope_buffer_state_t *s, uscope_pointer_pair_t *out,
                                                    uint32_t buffer, uint32_t i) {
  return uscope::guard([&] {
    NEED(s && out, "uscope_buffer_state_pair: NULL argument");
    const auto &b = buffer_of(s, buffer);
    if (i >= b.pairs.size()) fail(USCOPE_ERR_NOT_FOUND, "pointer pair %u: the buffer has %zu", i, b.pairs.size());
    *out = b.pairs[i];
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_instructions(uscope_cpu_trace_t *t, uscope_insn_iter_t **out,
                                                         uint64_t start, uint64_t end) {
  return uscope::guard([&] {
    NEED(t && out, "uscope_cpu_trace_instructions: NULL argument");
    NEED(start <= end, "uscope_cpu_trace_instructions: start (%llu) after end (%llu)",
         static_cast<unsigned long long>(start), static_cast<unsigned long long>(end));
    *out = new uscope_insn_iter(t, start, end, std::nullopt);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_cpu_trace_entity(uscope_cpu_trace_t *t, uscope_insn_iter_t **out,
                                                   uint32_t entity_id, uint64_t start, uint64_t end) {
  return uscope::guard([&] {
    NEED(t && out, "uscope_cpu_trace_entity: NULL argument");
    NEED(start <= end, "uscope_cpu_trace_entity: start (%llu) after end (%llu)",
         static_cast<unsigned long long>(start), static_cast<unsigned long long>(end));
    *out = new uscope_insn_iter(t, start, end, entity_id);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_insn_iter_next(uscope_insn_iter_t *it, uscope_insn_t *out) {
  return uscope::guard([&] {
    NEED(it && out, "uscope_insn_iter_next: NULL argument");
    const uscope::analysis::Insn *i = it->stream.next();
    if (!i) return USCOPE_DONE;
    auto &t = it->trace->impl;
    const auto &h = i->head;
    std::memset(out, 0, sizeof *out);
    out->entity_id = h.entity_id;
    out->status = h.status;
    out->sim_id = i->sim_id(t.sim_id_slots());
    out->pc = h.pc;
    out->inst_bits = h.inst_bits;
    out->has_inst_bits = (h.flags & uscope::analysis::InsnPiece::kHasBits) ? 1 : 0;
    out->first_cycle = h.first_cycle;
    out->last_cycle = h.last_cycle;
    out->flush_reason = h.flush_reason;
    out->num_stages = static_cast<uint32_t>(i->spans.size());
    out->stages = i->spans.data();
    it->disasm = t.disasm(*i);
    out->disasm = it->disasm.c_str();
    it->annotations.clear();
    for (uint32_t a : i->annotations) {
      if (!it->annotations.empty()) it->annotations += '\n';
      it->annotations += t.string_at(a);
    }
    out->annotations = it->annotations.c_str();
    it->function.clear();
    it->file.clear();
    if (const auto *loc = t.locate(h.pc)) {
      it->function = loc->function;
      it->file = loc->file;
      out->source_line = loc->line;
    }
    out->function = it->function.c_str();
    out->source_file = it->file.c_str();
    out->num_deps = static_cast<uint32_t>(i->deps.size());
    out->dep_src = i->deps.data();
    return USCOPE_OK;
  });
}

USCOPE_API void uscope_insn_iter_free(uscope_insn_iter_t *it) { delete it; }

USCOPE_API uscope_status_t uscope_cpu_trace_analyze(uscope_cpu_trace_t *t, uscope_perf_report_t *out, uint64_t start,
                                                    uint64_t end) {
  return uscope::guard([&] {
    NEED(t && out, "uscope_cpu_trace_analyze: NULL argument");
    NEED(out->struct_size >= sizeof(uint32_t) && out->struct_size <= sizeof *out,
         "uscope_cpu_trace_analyze: out->struct_size is %u (set it to sizeof)", out->struct_size);
    const uint32_t size = out->struct_size;
    t->impl.analyze(start, end, t->report);
    t->report.head.struct_size = size;
    std::memcpy(out, &t->report.head, size);
    return USCOPE_OK;
  });
}

}  // extern "C"
