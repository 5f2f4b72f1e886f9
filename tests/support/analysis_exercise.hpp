// The cpu analysis (include/uscope/analysis.h) over any file: opened over a
// reader, every query kind asked once (info, stages, metadata, counters with
// value, series and downsample, buffers at a cycle, instructions of the
// whole trace and of a window, one entity, analyze). Used by the reader's
// fuzz target: a hostile file must get an answer or a status, never a crash.
#pragma once

#include <cstdint>
#include <vector>

#include "uscope/analysis.h"

namespace uscope::test {

// The statuses the analysis may give for what a file contains: the reader's
// input errors, "no cpu scope" (NOT_FOUND) and a cpu scope that lacks what
// the protocol requires (SCHEMA). Returns the first other status, or OK.
inline uscope_status_t exercise_analysis(const char *path) {
  auto bad = [](uscope_status_t s) {
    return s != USCOPE_OK && s != USCOPE_DONE && s != USCOPE_ERR_NOT_FOUND && s != USCOPE_ERR_SCHEMA &&
           s != USCOPE_ERR_CORRUPT && s != USCOPE_ERR_TRUNCATED && s != USCOPE_ERR_BAD_MAGIC &&
           s != USCOPE_ERR_UNSUPPORTED_VERSION && s != USCOPE_ERR_UNKNOWN_COMPRESSION;
  };
  uscope_reader_t *r = nullptr;
  uscope_status_t s = uscope_reader_open(&r, path);
  if (s != USCOPE_OK) return bad(s) ? s : USCOPE_OK;
  uscope_cpu_trace_t *t = nullptr;
  uscope_status_t first_bad = USCOPE_OK;
  auto note = [&](uscope_status_t st) {
    if (bad(st) && first_bad == USCOPE_OK) first_bad = st;
    return st;
  };
  if (note(uscope_cpu_trace_open(&t, r, nullptr)) == USCOPE_OK) {
    uscope_cpu_trace_info_t info{};
    info.struct_size = sizeof info;
    if (note(uscope_cpu_trace_info(t, &info)) == USCOPE_OK) {
      const char *a = nullptr, *b = nullptr;
      for (uint32_t i = 0; i < info.num_stages; ++i) note(uscope_cpu_trace_stage(t, &a, i));
      for (uint32_t i = 0; i < info.num_metadata; ++i) note(uscope_cpu_trace_metadata(t, &a, &b, i));
      const uint64_t end = info.max_cycle < 4096 ? info.max_cycle : 4096;  // bounded work per input
      for (uint32_t c = 0; c < info.num_counters; ++c) {
        uint64_t v = 0;
        note(uscope_cpu_trace_counter_value(t, &v, c, end / 2));
        std::vector<uint64_t> series(16);
        note(uscope_cpu_trace_counter_series(t, series.data(), c, end / 3, series.size()));
        std::vector<uscope_counter_bucket_t> buckets(8);
        int exact = 0;
        note(uscope_cpu_trace_counter_downsample(t, buckets.data(), &exact, c, 0, end + 1, 8));
      }
      uscope_buffer_state_t *bs = nullptr;
      if (note(uscope_cpu_trace_buffers_at(t, &bs, end / 2)) == USCOPE_OK) {
        for (uint32_t k = 0; k < info.num_buffers; ++k) {
          uscope_buffer_fill_t f{};
          if (note(uscope_buffer_state_fill(bs, &f, k)) != USCOPE_OK) continue;
          for (uint32_t i = 0; i < f.occupied; ++i) {
            uscope_buffer_slot_t sl{};
            note(uscope_buffer_state_slot(bs, &sl, k, i));
          }
          for (uint32_t i = 0; i < f.num_pairs; ++i) {
            uscope_pointer_pair_t p{};
            note(uscope_buffer_state_pair(bs, &p, k, i));
          }
        }
        uscope_buffer_state_free(bs);
      }
      auto drain = [&](uscope_insn_iter_t *it) {
        uscope_insn_t insn;
        for (int n = 0; n < 100000 && note(uscope_insn_iter_next(it, &insn)) == USCOPE_OK; ++n) {
        }
        uscope_insn_iter_free(it);
      };
      uscope_insn_iter_t *it = nullptr;
      if (note(uscope_cpu_trace_instructions(t, &it, 0, UINT64_MAX)) == USCOPE_OK) drain(it);
      if (note(uscope_cpu_trace_instructions(t, &it, end / 3, end / 2)) == USCOPE_OK) drain(it);
      if (note(uscope_cpu_trace_entity(t, &it, 1, 0, UINT64_MAX)) == USCOPE_OK) drain(it);
      uscope_perf_report_t rep{};
      rep.struct_size = sizeof rep;
      note(uscope_cpu_trace_analyze(t, &rep, 0, end + 1));
    }
    uscope_cpu_trace_close(t);
  }
  uscope_reader_close(r);
  return first_bad;
}

}  // namespace uscope::test
