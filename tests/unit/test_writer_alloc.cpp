// The zero-allocation proof of the per-cycle calls (uscope.h: "In steady
// state they make no heap allocation").
//
// This file replaces the allocator entry points of the whole test binary
// (malloc, calloc, realloc, free, the aligned variants and every operator
// new/delete) with thin wrappers over glibc's __libc_* functions that count
// calls in thread-local counters. A counter of the simulation thread then
// shows every allocation the library makes on that thread, whatever the
// encoder thread does. Under AddressSanitizer or ThreadSanitizer the sanitizer
// owns malloc (and TSan's start-up, which allocates before this file's
// thread_local storage is usable, cannot run through replacements of it), so
// the same counters are fed from the sanitizer's allocation hooks instead:
// both runtimes call them for malloc, calloc, realloc, the aligned variants
// and operator new/delete alike.
//
// The same hooks can make large allocations of the calling thread fail, which
// is how USCOPE_ERR_NO_MEMORY is tested.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "support/test_util.hpp"
#include "support/trace_file.hpp"
#include "uscope/protocols.h"
#include "uscope/uscope.h"
#include "pccx/pccx.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define USCOPE_TEST_SANITIZER_HOOKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define USCOPE_TEST_SANITIZER_HOOKS 1
#endif
#endif

namespace {

using uscope::test::TempDir;
// Plain zero-initialised TLS (no constructor), so that reading it from inside
// malloc can never allocate or recurse.
thread_local uint64_t t_allocs;
thread_local uint64_t t_frees;
#if !defined(USCOPE_TEST_SANITIZER_HOOKS)
thread_local size_t t_fail_from;  // when non-zero, allocations of >= this many bytes fail
#endif
}  // namespace

#if defined(USCOPE_TEST_SANITIZER_HOOKS)
// Declared here: GCC installs no <sanitizer/allocator_interface.h>.
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void *, size_t),
                                                         void (*)(const volatile void *));
namespace {
void count_alloc(const volatile void *, size_t) { ++t_allocs; }
void count_free(const volatile void *) { ++t_frees; }
struct InstallHooks {
  InstallHooks() { __sanitizer_install_malloc_and_free_hooks(count_alloc, count_free); }
} install_hooks;
}  // namespace
#else
extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);
void *__libc_memalign(size_t, size_t);

#define USCOPE_EXPORT __attribute__((visibility("default")))

USCOPE_EXPORT void *malloc(size_t n) {
  ++t_allocs;
  if (t_fail_from && n >= t_fail_from) return nullptr;
  return __libc_malloc(n);
}
USCOPE_EXPORT void *calloc(size_t k, size_t n) {
  ++t_allocs;
  if (t_fail_from && n && k >= t_fail_from / n) return nullptr;
  return __libc_calloc(k, n);
}
USCOPE_EXPORT void *realloc(void *p, size_t n) {
  ++t_allocs;
  if (t_fail_from && n >= t_fail_from) return nullptr;
  return __libc_realloc(p, n);
}
USCOPE_EXPORT void free(void *p) {
  if (p) ++t_frees;
  __libc_free(p);
}
USCOPE_EXPORT void *memalign(size_t a, size_t n) {
  ++t_allocs;
  if (t_fail_from && n >= t_fail_from) return nullptr;
  return __libc_memalign(a, n);
}
USCOPE_EXPORT void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
USCOPE_EXPORT int posix_memalign(void **out, size_t a, size_t n) {
  void *p = memalign(a, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}  // extern "C"

// operator new/delete: counted through malloc/free above.
namespace {
void *new_impl(size_t n) {
  if (void *p = malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void *new_aligned(size_t n, std::align_val_t a) {
  if (void *p = memalign(static_cast<size_t>(a), n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace
USCOPE_EXPORT void *operator new(size_t n) { return new_impl(n); }
USCOPE_EXPORT void *operator new[](size_t n) { return new_impl(n); }
USCOPE_EXPORT void *operator new(size_t n, const std::nothrow_t &) noexcept { return malloc(n ? n : 1); }
USCOPE_EXPORT void *operator new[](size_t n, const std::nothrow_t &) noexcept { return malloc(n ? n : 1); }
USCOPE_EXPORT void *operator new(size_t n, std::align_val_t a) { return new_aligned(n, a); }
USCOPE_EXPORT void *operator new[](size_t n, std::align_val_t a) { return new_aligned(n, a); }
USCOPE_EXPORT void operator delete(void *p) noexcept { free(p); }
USCOPE_EXPORT void operator delete[](void *p) noexcept { free(p); }
USCOPE_EXPORT void operator delete(void *p, size_t) noexcept { free(p); }
USCOPE_EXPORT void operator delete[](void *p, size_t) noexcept { free(p); }
USCOPE_EXPORT void operator delete(void *p, const std::nothrow_t &) noexcept { free(p); }
USCOPE_EXPORT void operator delete[](void *p, const std::nothrow_t &) noexcept { free(p); }
USCOPE_EXPORT void operator delete(void *p, std::align_val_t) noexcept { free(p); }
USCOPE_EXPORT void operator delete[](void *p, std::align_val_t) noexcept { free(p); }
USCOPE_EXPORT void operator delete(void *p, size_t, std::align_val_t) noexcept { free(p); }
USCOPE_EXPORT void operator delete[](void *p, size_t, std::align_val_t) noexcept { free(p); }
#endif

namespace {

namespace fs = std::filesystem;

// ── A BOOM-like schema ──
struct Boom {
  uint16_t entities = 0, committed = 0, rob = 0, stage_transition = 0;
  uint8_t stage_enum = 0;
};
constexpr uint16_t kEntSlots = 512, kRobSlots = 64;
enum : uint8_t { kFetch = 0, kDecode, kRename, kDispatch, kIssue, kExecute, kWriteback, kCommit };

uscope_schema_t *boom_schema(Boom &b) {
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t clk = 0;
  uint16_t top = 0, core = 0;
  EXPECT_EQ(uscope_schema_add_clock(s, &clk, "core_clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, &top, "top", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, &core, "core", top, "cpu", USCOPE_CLOCK_INHERIT), USCOPE_OK);
  const char *stages[] = {"fetch", "decode", "rename", "dispatch", "issue", "execute", "writeback", "commit"};
  EXPECT_EQ(uscope_schema_add_enum(s, &b.stage_enum, "stage", stages, 8), USCOPE_OK);
  const uscope_field_t ent[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0},
                                {"pc", USCOPE_FT_U64, 0, 0, 0},
                                {"inst_bits", USCOPE_FT_U32, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &b.entities, "entities", core, kEntSlots, USCOPE_SF_SPARSE, ent, 3,
                                      nullptr, 0),
            USCOPE_OK);
  const uscope_field_t cnt[] = {{"committed", USCOPE_FT_U64, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &b.committed, "committed", core, 1, 0, cnt, 1, nullptr, 0),
            USCOPE_OK);
  const uscope_field_t rob[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0}};
  const uscope_field_t ptrs[] = {{"head", USCOPE_FT_U16, 0, USCOPE_ROLE_HEAD_PTR, 0},
                                 {"tail", USCOPE_FT_U16, 0, USCOPE_ROLE_TAIL_PTR, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &b.rob, "rob", core, kRobSlots,
                                      USCOPE_SF_SPARSE | USCOPE_SF_BUFFER, rob, 1, ptrs, 2),
            USCOPE_OK);
  const uscope_field_t ev[] = {{"entity", USCOPE_FT_U32, 0, 0, 0},
                               {"stage", USCOPE_FT_ENUM, b.stage_enum, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, &b.stage_transition, "stage_transition", core, ev, 2), USCOPE_OK);
  return s;
}

// One BOOM-like cycle: fetch an instruction, move two through the pipeline,
// retire one, update the ROB and the committed counter. About 12 calls.
// Returns the OR of every status (0 when all succeeded), so that nothing in
// the measured loop needs gtest.
inline uscope_status_t boom_cycle(uscope_writer_t *w, const Boom &b, uint64_t c) {
  uscope_status_t bad = 0;
  uint8_t ev[5];
  auto transition = [&](uint32_t id, uint8_t stage) {
    std::memcpy(ev, &id, 4);
    ev[4] = stage;
    bad |= uscope_event(w, b.stage_transition, ev, sizeof ev);
  };
  bad |= uscope_begin_cycle(w, c * 1000);
  const uint32_t id = static_cast<uint32_t>(c);
  const uint16_t slot = static_cast<uint16_t>(c % kEntSlots);
  bad |= uscope_slot_set(w, b.entities, slot, 0, id);
  bad |= uscope_slot_set(w, b.entities, slot, 1, 0x80000000ull + 4 * c);
  bad |= uscope_slot_set(w, b.entities, slot, 2, static_cast<uint32_t>(c * 2654435761u));
  transition(id, kFetch);
  if (c >= 8) transition(id - 8, kExecute);
  if (c >= 40) {
    const uint32_t old = id - 40;
    bad |= uscope_slot_clear(w, b.entities, static_cast<uint16_t>(old % kEntSlots));
    bad |= uscope_slot_add(w, b.committed, 0, 0, 1);
    bad |= uscope_slot_clear(w, b.rob, static_cast<uint16_t>(old % kRobSlots));
    transition(old, kCommit);
  }
  bad |= uscope_slot_set(w, b.rob, static_cast<uint16_t>(c % kRobSlots), 0, id);
  bad |= uscope_prop_set(w, b.rob, 0, (c >= 40 ? c - 39 : 0) % kRobSlots);
  bad |= uscope_prop_set(w, b.rob, 1, (c + 1) % kRobSlots);
  bad |= uscope_end_cycle(w);
  return bad;
}

// A cycle larger than the queue: the producer must wait for the encoder.
inline uscope_status_t huge_cycle(uscope_writer_t *w, const Boom &b, uint64_t c, uint64_t ops) {
  uscope_status_t bad = uscope_begin_cycle(w, c * 1000);
  for (uint64_t k = 0; k < ops; ++k)
    bad |= uscope_slot_set(w, b.rob, static_cast<uint16_t>(k % kRobSlots), 0, k);
  bad |= uscope_end_cycle(w);
  return bad;
}

struct Counts {
  uint64_t allocs, frees;
};
Counts counts() { return {t_allocs, t_frees}; }
}  // namespace

// For the other files of this binary that count allocations
// (test_reader_replay_capi.cpp).
namespace uscope::test {
uint64_t thread_allocations() { return t_allocs; }
}  // namespace uscope::test

namespace {

// Supplies the committed counter's authoritative value at each boundary, as a
// simulator would from its own state.
struct CallbackState {
  uint64_t committed = 0;
  uint64_t calls = 0;
  uscope_status_t bad = 0;
  uint16_t sid = 0;
};
void supply_counter(uscope_writer_t *w, uint64_t, void *ud) {
  auto *st = static_cast<CallbackState *>(ud);
  ++st->calls;
  st->bad |= uscope_checkpoint_storage(w, st->sid, nullptr, &st->committed, 1);
}

constexpr uint64_t kWarmup = 5'000;
constexpr uint64_t kMeasured = 100'000;

TEST(WriterAlloc, SteadyStateMakesNoAllocationOnTheSimulationThread) {
  TempDir dir;
  const std::string path = dir.file("boom.usc");
  Boom b;
  uscope_schema_t *s = boom_schema(b);
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 100 * 1000;  // a segment every 100 cycles
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  CallbackState cb;
  cb.sid = b.committed;
  ASSERT_EQ(uscope_set_checkpoint_callback(w, supply_counter, &cb), USCOPE_OK);

  // Make sure the counters really see this thread's allocations.
  const Counts probe0 = counts();
  {
    void *p = ::operator new(100);
    asm volatile("" : : "g"(p) : "memory");  // keep the pair from being elided
    ::operator delete(p);
  }
  const Counts probe1 = counts();
  ASSERT_GE(probe1.allocs - probe0.allocs, 1u) << "the allocation counter is not wired up";
  ASSERT_GE(probe1.frees - probe0.frees, 1u);

  uscope_status_t bad = 0;
  uint64_t c = 1;
  for (; c <= kWarmup; ++c) {
    bad |= boom_cycle(w, b, c);
    if (c >= 40) ++cb.committed;
  }
  ASSERT_EQ(bad, 0) << uscope_writer_error(w);
  ASSERT_GE(cb.calls, 40u);  // several segment boundaries crossed already

  const Counts before = counts();
  for (uint64_t end = c + kMeasured; c < end; ++c) {
    bad |= boom_cycle(w, b, c);
    ++cb.committed;
  }
  const Counts after = counts();

  EXPECT_EQ(bad, 0) << uscope_writer_error(w);
  EXPECT_EQ(cb.bad, 0);
  EXPECT_EQ(after.allocs - before.allocs, 0u) << "allocations on the simulation thread";
  EXPECT_EQ(after.frees - before.frees, 0u) << "frees on the simulation thread";
  EXPECT_GE(cb.calls, (kWarmup + kMeasured) / 100 - 1);
  // Control: a call that is allowed to allocate (a new string) is seen.
  uint32_t idx = 0;
  const Counts ctl0 = counts();
  ASSERT_EQ(uscope_string_insert(w, &idx, "a string long enough to need the heap, not SSO"), USCOPE_OK);
  EXPECT_GT(counts().allocs - ctl0.allocs, 0u) << "the library's allocations are not counted";

  uscope_writer_stats_t st;
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  EXPECT_EQ(st.cycles, kWarmup + kMeasured);
  EXPECT_EQ(st.errors, 0u);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();

  // The trace is complete: one frame per cycle, a segment per 100 cycles.
  const auto t = uscope::test::read_trace_file(path);
  uint64_t frames = 0;
  for (const auto &seg : t.segments) frames += seg.header.num_frames;
  EXPECT_EQ(frames, kWarmup + kMeasured);
  // The last cycle (105,000) is itself a boundary, so no partial segment follows.
  EXPECT_EQ(t.segments.size(), (kWarmup + kMeasured) / 100);
}

// The same proof for producers (uscope_writer_add_producer): two threads,
// each counting its own allocations while the encoder merges their rings.
TEST(WriterAlloc, ProducersMakeNoAllocationOnTheirThreads) {
  TempDir dir;
  const std::string path = dir.file("producers.usc");
  Boom b;
  uscope_schema_t *s = boom_schema(b);
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 100 * 1000;
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  uscope_writer_t *prod[2] = {};
  for (auto &p : prod) ASSERT_EQ(uscope_writer_add_producer(w, &p), USCOPE_OK) << uscope_last_error();
  struct Result {
    uscope_status_t bad = 0;
    Counts before{}, after{};
  } res[2];
  auto run = [&](unsigned i) {
    Result &r = res[i];
    uint64_t c = 1;
    for (; c <= kWarmup; ++c) r.bad |= boom_cycle(prod[i], b, c);
    r.before = counts();
    for (uint64_t end = c + kMeasured; c < end; ++c) r.bad |= boom_cycle(prod[i], b, c);
    r.after = counts();
    r.bad |= uscope_writer_close(prod[i]);
  };
  std::thread t0(run, 0), t1(run, 1);
  t0.join();
  t1.join();
  for (const Result &r : res) {
    EXPECT_EQ(r.bad, 0);
    EXPECT_EQ(r.after.allocs - r.before.allocs, 0u) << "allocations on a producer's thread";
    EXPECT_EQ(r.after.frees - r.before.frees, 0u) << "frees on a producer's thread";
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  const auto t = uscope::test::read_trace_file(path);
  uint64_t frames = 0;
  for (const auto &seg : t.segments) frames += seg.header.num_frames;
  EXPECT_EQ(frames, kWarmup + kMeasured);  // both producers' cycles of a time are one frame
}

TEST(WriterAlloc, BackpressureWaitMakesNoAllocationOnTheSimulationThread) {
  TempDir dir;
  const std::string path = dir.file("boom.usc");
  Boom b;
  uscope_schema_t *s = boom_schema(b);
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 100 * 1000;
  o.queue_bytes = 64 * 1024;  // tiny: raised only to fit the largest record
  o.backpressure = USCOPE_BACKPRESSURE_BLOCK;
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  uscope_writer_stats_t st;
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  ASSERT_GE(st.queue_bytes, 64u * 1024);
  ASSERT_LT(st.queue_bytes, 1u << 20);
  // Every 10,000 cycles one cycle bigger than the whole queue: the producer
  // has to wait for the encoder at least then, whatever the machine's speed.
  const uint64_t huge_ops = st.queue_bytes / 16 + 1000;

  uscope_status_t bad = 0;
  uint64_t c = 1;
  for (; c <= kWarmup; ++c) bad |= boom_cycle(w, b, c);
  bad |= huge_cycle(w, b, c++, huge_ops);
  ASSERT_EQ(bad, 0) << uscope_writer_error(w);

  const Counts before = counts();
  uint64_t huge = 0;
  for (uint64_t end = c + kMeasured; c < end; ++c) {
    if (c % 10'000 == 0) {
      bad |= huge_cycle(w, b, c, huge_ops);
      ++huge;
    } else {
      bad |= boom_cycle(w, b, c);
    }
  }
  const Counts after = counts();

  EXPECT_EQ(bad, 0) << uscope_writer_error(w);
  EXPECT_EQ(after.allocs - before.allocs, 0u) << "allocations on the simulation thread";
  EXPECT_EQ(after.frees - before.frees, 0u) << "frees on the simulation thread";
  ASSERT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  EXPECT_EQ(huge, 10u);
  EXPECT_GE(st.stalls, huge) << "the producer never waited for the queue";
  EXPECT_EQ(st.cycles, kWarmup + 1 + kMeasured);
  EXPECT_EQ(st.dropped_cycles, 0u);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  const auto t = uscope::test::read_trace_file(path);
  uint64_t frames = 0;
  for (const auto &seg : t.segments) frames += seg.header.num_frames;
  EXPECT_EQ(frames, kWarmup + 1 + kMeasured);  // nothing lost while waiting
}

// ── The protocol helpers (include/uscope/protocols.h) ──
//
// Every per-cycle call of the cpu, noc and npu helpers, every cycle. Their
// strings are short enough for std::string's inline buffer (at most 15
// bytes): interning a string seen before then allocates nothing (a longer
// one costs a temporary key in uscope_string_insert; docs/protocols.md).
struct Protocols {
  uscope_cpu_t *cpu = nullptr;
  uscope_noc_t *noc = nullptr;
  uscope_npu_t *npu = nullptr;
  ~Protocols() {
    uscope_cpu_free(cpu);
    uscope_noc_free(noc);
    uscope_npu_free(npu);
  }
};

uscope_schema_t *protocol_schema(Protocols &p) {
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_clock(s, nullptr, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  const char *const stages[] = {"fetch", "decode", "execute", "memory", "writeback"};
  const uscope_field_t done[] = {{"done", USCOPE_FT_BOOL, 0, 0, 0}};
  const uscope_cpu_buffer_def_t rob[] = {{"rob", 32, done, 1}};
  const char *const cpu_counters[] = {"bp_misses"};
  uscope_cpu_config_t c{};
  c.struct_size = sizeof c;
  c.scope_name = "core";
  c.clock_id = USCOPE_CLOCK_INHERIT;
  c.isa = "RV64GC";
  c.stages = stages;
  c.num_stages = 5;
  c.max_entities = 64;
  c.buffers = rob;
  c.num_buffers = 1;
  c.counters = cpu_counters;
  c.num_counters = 1;
  EXPECT_EQ(uscope_cpu_declare(s, &p.cpu, &c), USCOPE_OK) << uscope_last_error();
  const char *const noc_stages[] = {"issue", "route", "deliver"};
  const uscope_field_t vc[] = {{"vc", USCOPE_FT_U8, 0, 0, 0}};
  const uscope_noc_buffer_def_t vcbuf[] = {{"vc_buf", 8, vc, 1}};
  uscope_noc_config_t n{};
  n.struct_size = sizeof n;
  n.scope_name = "noc";
  n.clock_id = USCOPE_CLOCK_INHERIT;
  n.bus_protocol = "AXI4";
  n.topology = "crossbar";
  n.stages = noc_stages;
  n.num_stages = 3;
  n.max_txns = 32;
  n.buffers = vcbuf;
  n.num_buffers = 1;
  n.num_ports = 4;
  EXPECT_EQ(uscope_noc_declare(s, &p.noc, &n), USCOPE_OK) << uscope_last_error();
  uscope_npu_config_t a{};
  a.struct_size = sizeof a;
  a.scope_name = "npu";
  a.clock_id = USCOPE_CLOCK_INHERIT;
  a.queue_depth = 8;
  a.num_contexts = 4;
  a.num_te = a.num_ve = a.num_dma_channels = 2;
  a.num_sram_banks = 4;
  a.num_dram_channels = 2;
  a.num_noc_links = 2;
  EXPECT_EQ(uscope_npu_declare(s, &p.npu, &a), USCOPE_OK) << uscope_last_error();
  return s;
}

inline uscope_status_t protocol_cycle(uscope_writer_t *w, const Protocols &p, uint64_t c) {
  uscope_status_t bad = uscope_begin_cycle(w, c * 1000);
  // cpu: an instruction through fetch and decode, retired or flushed, with a
  // dependency, an annotation, a stall and its ROB entry.
  const auto e = static_cast<uint32_t>(c % 64);
  const auto r = static_cast<uint16_t>(c % 32);
  bad |= uscope_cpu_fetch(w, p.cpu, e, 0x80000000ull + 4 * c, 0x13);
  bad |= uscope_cpu_stage_transition(w, p.cpu, e, 1);
  bad |= uscope_cpu_entity_set(w, p.cpu, e, USCOPE_CPU_FIELD_PC, 0x80000000ull + 4 * c);
  bad |= uscope_cpu_dependency(w, p.cpu, (e + 63) % 64, e, USCOPE_CPU_DEP_RAW);
  // Longer than libstdc++'s 15-byte inline string buffer: an interned string
  // of any length must cost nothing on the next call.
  bad |= uscope_cpu_annotate(w, p.cpu, e, c % 2 ? "lw a0,0(a1)  # load the next element"
                                                  : "add a0,a0,a2  # accumulate the row");
  bad |= uscope_cpu_stall(w, p.cpu, static_cast<uint8_t>(c % 7));
  bad |= uscope_cpu_buffer_insert(w, p.cpu, 0, r, e);
  bad |= uscope_cpu_buffer_set(w, p.cpu, 0, r, 1, 1);
  bad |= uscope_cpu_buffer_remove(w, p.cpu, 0, static_cast<uint16_t>((c + 16) % 32));
  bad |= uscope_cpu_counter_add(w, p.cpu, 1, c % 2);
  bad |= c % 2 ? uscope_cpu_flush(w, p.cpu, e, USCOPE_CPU_FLUSH_MISPREDICT) : uscope_cpu_retire(w, p.cpu, e);
  // noc: a transaction issued, arbitrated, retried, beaten and completed.
  const auto t = static_cast<uint32_t>(c % 32);
  const auto port = static_cast<uint16_t>(c % 4);
  bad |= uscope_noc_issue(w, p.noc, t, c % 2, 0x1000 + 64 * c, 2, 3, port, 3 - port);
  bad |= uscope_noc_txn_set(w, p.noc, t, USCOPE_NOC_FIELD_LEN, 4);
  bad |= uscope_noc_stage_transition(w, p.noc, t, 1);
  bad |= uscope_noc_arb_decision(w, p.noc, t, port, static_cast<uint8_t>(1 + c % 3));
  bad |= uscope_noc_retry(w, p.noc, t, USCOPE_NOC_RETRY_ARB_LOST);
  bad |= uscope_noc_link_credit(w, p.noc, port, USCOPE_NOC_CREDIT_CONSUME, 1);
  bad |= uscope_noc_buffer_insert(w, p.noc, 0, static_cast<uint16_t>(c % 8), t);
  bad |= uscope_noc_buffer_set(w, p.noc, 0, static_cast<uint16_t>(c % 8), 1, c % 4);
  bad |= uscope_noc_beat(w, p.noc, t, 0, 8);
  bad |= uscope_noc_beat(w, p.noc, t, 1, 8);
  bad |= uscope_noc_counter_add(w, p.noc, USCOPE_NOC_COUNTER_BYTES_RX, 16);
  bad |= uscope_noc_timeout(w, p.noc, t, 100);
  bad |= uscope_noc_annotate(w, p.noc, t, "slow target");
  bad |= uscope_noc_txn_handoff(w, p.noc, 2, t, 3, t);
  bad |= uscope_noc_buffer_remove(w, p.noc, 0, static_cast<uint16_t>(c % 8));
  bad |= uscope_noc_complete(w, p.noc, t);
  // npu: every event type of the JSONL trace, with its context.
  const auto ctx = static_cast<uint16_t>(c % 4);
  const auto slot = static_cast<uint16_t>(c % 8);
  const auto u = static_cast<uint16_t>(c % 2);
  const auto id = static_cast<uint32_t>(c);
  bad |= uscope_npu_context(w, p.npu, ctx, 0, 0, 1, 3, 3, 7, id, id + 1, "QKV_PROJ");
  bad |= uscope_npu_context_ext(w, p.npu, ctx, 0, "llama2_7b", "BF16");
  bad |= uscope_npu_cmd_enqueue(w, p.npu, slot, ctx, id, "MATMUL", USCOPE_NPU_SOURCE_ISA, id, 0x7f0000000000ull, 3, 3,
                                "QKV_PROJ");
  bad |= uscope_npu_cmd_start(w, p.npu, slot, ctx, id);
  bad |= uscope_npu_job_issue(w, p.npu, ctx, id, id, "TE_GEMM", 5, USCOPE_NPU_NULL32);
  bad |= uscope_npu_dma_start(w, p.npu, ctx, id, u, "DRAM_TO_SRAM", 0x7f0000000000ull, 4096, 65536, id, id);
  bad |= uscope_npu_noc_tx_start(w, p.npu, ctx, id, u, 65536, id);
  bad |= uscope_npu_dram_tx_start(w, p.npu, ctx, id, u, 65536, id);
  bad |= uscope_npu_te_start(w, p.npu, u, ctx, id, id, 128, 128, 256, 64, 64, 64);
  bad |= uscope_npu_sram_access(w, p.npu, ctx, 8192, static_cast<uint16_t>(c % 4), USCOPE_NPU_ACCESS_READ, "TE", 0,
                                id, id);
  bad |= uscope_npu_sram_conflict(w, p.npu, ctx, static_cast<uint16_t>(c % 4), 3, 1, "VE,DMA", id);
  bad |= uscope_npu_noc_tx_end(w, p.npu, ctx, id, u, 65536);
  bad |= uscope_npu_dram_tx_end(w, p.npu, ctx, id, u, 65536);
  bad |= uscope_npu_dma_end(w, p.npu, ctx, id, u, id, id, 65536);
  bad |= uscope_npu_te_end(w, p.npu, u, ctx, id, id, 4194304, 50);
  bad |= uscope_npu_ve_start(w, p.npu, u, ctx, id, id, "LAYERNORM", 4096, 128);
  bad |= uscope_npu_ve_end(w, p.npu, u, ctx, id, id, 40);
  bad |= uscope_npu_job_done(w, p.npu, ctx, id, id, "TE_GEMM", 60);
  bad |= uscope_npu_irq_emit(w, p.npu, ctx, id, id, 3);
  bad |= uscope_npu_token_complete(w, p.npu, ctx, id, id, "OK");
  bad |= uscope_npu_warn(w, p.npu, ctx, "TE", "LOW_UTIL", "TE util < 50%", id, USCOPE_NPU_ABSENT32);
  bad |= uscope_npu_error(w, p.npu, ctx, "DMA", "ADDR_ALIGN", "unaligned addr", id, id);
  bad |= uscope_npu_cmd_end(w, p.npu, slot, ctx, id, "OK");
  bad |= uscope_npu_counter_add(w, p.npu, USCOPE_NPU_COUNTER_MACS, 1);
  if (c % 4 == 3) bad |= uscope_npu_context_clear(w, p.npu, ctx);
  bad |= uscope_end_cycle(w);
  return bad;
}

TEST(WriterAlloc, ProtocolHelpersMakeNoAllocationOnTheSimulationThread) {
  TempDir dir;
  const std::string path = dir.file("protocols.usc");
  Protocols p;
  uscope_schema_t *s = protocol_schema(p);
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 100 * 1000;  // a segment every 100 cycles
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);

  constexpr uint64_t kProtoWarmup = 1'000, kProtoMeasured = 20'000;
  uscope_status_t bad = 0;
  uint64_t c = 0;
  for (; c < kProtoWarmup; ++c) bad |= protocol_cycle(w, p, c);  // interns every string once
  ASSERT_EQ(bad, 0) << uscope_writer_error(w) << " / " << uscope_last_error();

  const Counts before = counts();
  for (const uint64_t end = c + kProtoMeasured; c < end; ++c) bad |= protocol_cycle(w, p, c);
  const Counts after = counts();

  EXPECT_EQ(bad, 0) << uscope_writer_error(w) << " / " << uscope_last_error();
  EXPECT_EQ(after.allocs - before.allocs, 0u) << "allocations on the simulation thread";
  EXPECT_EQ(after.frees - before.frees, 0u) << "frees on the simulation thread";
  // Control: a string not seen before is interned, which allocates, and is seen.
  const Counts ctl0 = counts();
  bad = uscope_begin_cycle(w, c * 1000);
  bad |= uscope_cpu_annotate(w, p.cpu, 0, "a string long enough to need the heap, not SSO");
  bad |= uscope_end_cycle(w);
  EXPECT_EQ(bad, 0);
  EXPECT_GT(counts().allocs - ctl0.allocs, 0u) << "the library's allocations are not counted";

  uscope_writer_stats_t st;
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  EXPECT_EQ(st.cycles, kProtoWarmup + kProtoMeasured + 1);
  EXPECT_EQ(st.errors, 0u);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  const auto t = uscope::test::read_trace_file(path);
  uint64_t frames = 0;
  for (const auto &seg : t.segments) frames += seg.header.num_frames;
  EXPECT_EQ(frames, kProtoWarmup + kProtoMeasured + 1);
}

#if !defined(USCOPE_TEST_SANITIZER_HOOKS)
// USCOPE_ERR_NO_MEMORY: the queue allocation at open fails. (Under ASan or
// TSan the sanitizer owns malloc and cannot be made to fail on demand.)
TEST(WriterAlloc, OpenReportsNoMemoryWhenTheQueueCannotBeAllocated) {
  TempDir dir;
  const std::string path = dir.file("t.usc");
  Boom b;
  uscope_schema_t *s = boom_schema(b);
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.queue_bytes = 2ull << 30;
  uscope_writer_t *w = reinterpret_cast<uscope_writer_t *>(0x1);
  t_fail_from = 1ull << 30;
  const uscope_status_t st = uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o);
  t_fail_from = 0;
  EXPECT_EQ(st, USCOPE_ERR_NO_MEMORY);
  EXPECT_NE(std::strstr(uscope_last_error(), "cannot allocate a 2147483648-byte queue"), nullptr)
      << uscope_last_error();
  EXPECT_EQ(w, reinterpret_cast<uscope_writer_t *>(0x1));  // *out untouched
  EXPECT_FALSE(fs::exists(path));
  // The same schema and options open fine once memory is available again.
  o.queue_bytes = 0;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_schema_free(s);
}

// A segment header's deltas_raw_size is only a claim until its blob is
// decompressed. uscope_reader_segment_items once reserved that much for the
// payloads up front: a 12 KB file claiming 1 GB allocated 1 GB (found by
// fuzz_cli_uscope). With allocations of 64 MiB and more failing, the items of
// such a segment must come back (none: it does not decode) instead of
// USCOPE_ERR_NO_MEMORY.
TEST(ReaderAlloc, SegmentItemsReserveNoMoreThanTheBlobCanHold) {
  const std::string src = uscope::test::kCorpusDir + "02_multiseg.uscope";
  std::vector<uint8_t> bytes = uscope::test::read_bytes(src);
  ASSERT_FALSE(bytes.empty()) << src;
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, src.c_str()), USCOPE_OK) << uscope_last_error();
  uscope_file_info_t fi{};
  fi.struct_size = sizeof fi;
  ASSERT_EQ(uscope_reader_info(r, &fi), USCOPE_OK);
  ASSERT_GE(fi.num_segments, 2u);
  const uint32_t last = fi.num_segments - 1;
  uscope_segment_info_t seg{};
  ASSERT_EQ(uscope_reader_segment(r, &seg, last), USCOPE_OK);
  uscope_reader_close(r);
  // §8.1: the segment header's deltas_raw_size, a u32 at byte 40. 2^30 is the
  // most the reader indexes; the blob holds a few hundred bytes.
  const uint32_t claim = 1u << 30;
  for (int k = 0; k < 4; ++k) bytes[seg.offset + 40 + k] = static_cast<uint8_t>(claim >> (8 * k));
  TempDir dir;
  const std::string path = dir.file("claims_1gib.uscope");
  {
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
  ASSERT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(uscope_reader_segment(r, &seg, last), USCOPE_OK);
  ASSERT_EQ(seg.deltas_raw_size, claim);
  auto items_of = [&](uint32_t i, uscope_status_t *st) {
    uscope_item_iter_t *it = nullptr;
    size_t n = 0;
    t_fail_from = size_t{64} << 20;
    *st = uscope_reader_segment_items(r, &it, i);
    t_fail_from = 0;
    uscope_item_t item{};
    if (it)
      while (uscope_item_iter_next(it, &item) == USCOPE_OK) ++n;
    uscope_item_iter_free(it);
    return n;
  };
  uscope_status_t st = USCOPE_OK;
  EXPECT_EQ(items_of(last, &st), 0u);
  EXPECT_EQ(st, USCOPE_OK) << uscope_last_error();
  EXPECT_GT(items_of(0, &st), 0u);  // the segments before it still read
  EXPECT_EQ(st, USCOPE_OK) << uscope_last_error();
  uscope_reader_close(r);
}
#endif

}  // namespace

// The pccx streaming writer (include/pccx/pccx.h): pccx_writer_event, with and
// without an api_name, allocates and frees nothing on the calling thread in
// steady state, including when it waits for a full queue.
TEST(WriterAlloc, PccxWriterEventMakesNoAllocation) {
  TempDir dir;
  for (uint32_t enc : {uint32_t{PCCX_ENCODING_BINCODE}, uint32_t{PCCX_ENCODING_FLATBUF}}) {
    const std::string path = dir.file(enc ? "t_flat.pccx" : "t_bin.pccx");
    pccx_writer_options_t o = PCCX_WRITER_OPTIONS_INIT;
    o.encoding = enc;
    o.queue_bytes = 256 * 1024;  // small: the measured loop also waits for the encoder
    pccx_writer_t *w = nullptr;
    ASSERT_EQ(pccx_writer_open(&w, path.c_str(), &o), USCOPE_OK) << uscope_last_error();
    uscope_status_t bad = 0;
    uint64_t i = 0;
    for (; i < kWarmup; ++i)
      bad |= pccx_writer_event(w, uint32_t(i % 32), i * 4, 3, uint32_t(1 + i % 5), nullptr);
    const Counts before = counts();
    for (uint64_t end = i + 4 * kMeasured; i < end; ++i) {
      const char *api = (i % 1000 == 0) ? "uca_a_long_api_name_well_past_any_small_string_buffer" : nullptr;
      bad |= pccx_writer_event(w, uint32_t(i % 32), i * 4, 3, api ? 6u : uint32_t(1 + i % 5), api);
    }
    const Counts after = counts();
    EXPECT_EQ(bad, 0) << pccx_writer_error(w);
    EXPECT_EQ(after.allocs - before.allocs, 0u) << "allocations in pccx_writer_event";
    EXPECT_EQ(after.frees - before.frees, 0u) << "frees in pccx_writer_event";
    pccx_writer_stats_t st{};
    st.struct_size = sizeof st;
    ASSERT_EQ(pccx_writer_stats(w, &st), USCOPE_OK);
    EXPECT_EQ(st.events, kWarmup + 4 * kMeasured);
    EXPECT_EQ(st.dropped_events, 0u);
    ASSERT_EQ(pccx_writer_close(w), USCOPE_OK) << uscope_last_error();
    pccx_reader_t *r = nullptr;
    ASSERT_EQ(pccx_reader_open(&r, path.c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
    EXPECT_EQ(pccx_reader_event_count(r), kWarmup + 4 * kMeasured);
    pccx_reader_close(r);
  }
}
