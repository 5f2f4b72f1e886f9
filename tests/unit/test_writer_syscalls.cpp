// The per-cycle calls make no system call in steady state (the allocation half
// of the hot-path promise is in test_writer_alloc.cpp). In a forked child,
// after warm-up, the simulation thread installs a seccomp filter that traps
// every system call; a SIGSYS handler counts the trapped ones. The queue is
// sized so that it never fills, which is the steady state the promise is
// about (a full queue waits, by design).
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "support/test_util.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kAuditArch = 0;  // the test fails below rather than skip
#endif

std::atomic<int> g_trapped{0};
std::atomic<int> g_first_nr{-1};

void on_sigsys(int, siginfo_t *si, void *) {
  int expected = -1;
  g_first_nr.compare_exchange_strong(expected, si->si_syscall);
  g_trapped.fetch_add(1);
}

// Trap every system call of the calling thread except the return from the
// SIGSYS handler and the final exit_group of the child.
bool trap_syscalls_on_this_thread() {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// What the child reports, through memory shared with the parent: after the
// filter is installed it can make no system call, not even write().
struct Report {
  int filtered;
  int failures;
  int trapped;
  int first_nr;
  uint64_t stalls;
  uint64_t cycles;
};

// Runs body in a forked child whose main thread is filtered once body calls
// trap(); returns what the child reported. The child ends with a raw
// exit_group, so no exit handler (nor a sanitizer's) runs under the filter.
template <class Body>
Report run_filtered_child(Body body) {
  auto *r = static_cast<Report *>(
      mmap(nullptr, sizeof(Report), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  EXPECT_NE(r, MAP_FAILED);
  if (r == MAP_FAILED) return Report{};
  *r = Report{0, 0, 0, -1, 0, 0};
  const pid_t pid = fork();
  if (pid == 0) {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &sa, nullptr);
    body(*r);
    r->trapped = g_trapped.load();
    r->first_nr = g_first_nr.load();
    syscall(SYS_exit_group, 0);
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  const Report out = *r;
  munmap(r, sizeof(Report));
  return out;
}

TEST(WriterSyscalls, SteadyStateMakesNoSystemCallOnTheSimulationThread) {
  ASSERT_NE(kAuditArch, 0u) << "no seccomp architecture constant for this target";
  TempDir dir("uscope_syscalls");
  const std::string path = dir.file("t.uscope");
  constexpr uint64_t kWarm = 2000, kMeasured = 100000;  // ~150 bytes a cycle: ~15 MB

  const Report r = run_filtered_child([&](Report &rep) {
    // Everything up to the filter runs normally: schema, open (which starts
    // the encoder thread, unfiltered), warm-up.
    uscope_schema_t *s = nullptr;
    rep.failures += uscope_schema_new(&s) != USCOPE_OK;
    rep.failures += uscope_schema_add_clock(s, nullptr, "clk", 1000) != USCOPE_OK;
    rep.failures += uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0) != USCOPE_OK;
    const char *stages[] = {"fetch", "decode", "execute", "retire"};
    uint8_t stage_enum = 0;
    rep.failures += uscope_schema_add_enum(s, &stage_enum, "stage", stages, 4) != USCOPE_OK;
    uscope_field_t ent[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0},
                            {"pc", USCOPE_FT_U64, 0, 0, 0},
                            {"inst_bits", USCOPE_FT_U32, 0, 0, 0}};
    uint16_t entities = 0, committed = 0, ev = 0;
    rep.failures += uscope_schema_add_storage(s, &entities, "entities", 0, 512, USCOPE_SF_SPARSE, ent, 3, nullptr, 0) != USCOPE_OK;
    uscope_field_t ctr[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
    rep.failures += uscope_schema_add_storage(s, &committed, "committed", 0, 1, 0, ctr, 1, nullptr, 0) != USCOPE_OK;
    uscope_field_t st[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0},
                           {"stage", USCOPE_FT_ENUM, stage_enum, 0, 0}};
    rep.failures += uscope_schema_add_event(s, &ev, "stage_transition", 0, st, 2) != USCOPE_OK;
    uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
    o.checkpoint_interval_ps = 100 * 1000;  // a segment boundary every 100 cycles
    o.queue_bytes = 256ull << 20;           // far more than the measured cycles write
    uscope_writer_t *w = nullptr;
    if (uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o) != USCOPE_OK) return;
    uscope_schema_free(s);
    auto cycle = [&](uint64_t c) {
      int bad = 0;
      bad |= uscope_begin_cycle(w, c * 1000);
      const uint16_t slot = c % 512;
      bad |= uscope_slot_set(w, entities, slot, 0, c);
      bad |= uscope_slot_set(w, entities, slot, 1, 0x80000000ull + 4 * c);
      bad |= uscope_slot_set(w, entities, slot, 2, 0x00000013);
      bad |= uscope_slot_clear(w, entities, (slot + 256) % 512);
      bad |= uscope_slot_add(w, committed, 0, 0, 1);
      uint8_t payload[5];
      const uint32_t id = static_cast<uint32_t>(c);
      std::memcpy(payload, &id, 4);
      payload[4] = static_cast<uint8_t>(c % 4);
      bad |= uscope_event(w, ev, payload, sizeof payload);
      bad |= uscope_end_cycle(w);
      return bad != 0;
    };
    uint64_t c = 0;
    for (; c < kWarm; ++c) rep.failures += cycle(c);
    rep.filtered = trap_syscalls_on_this_thread();
    if (!rep.filtered) return;
    for (const uint64_t end = c + kMeasured; c < end; ++c) rep.failures += cycle(c);
    uscope_writer_stats_t stats{};
    stats.struct_size = sizeof stats;
    rep.failures += uscope_writer_stats(w, &stats) != USCOPE_OK;
    rep.stalls = stats.stalls;
    rep.cycles = stats.cycles;
    // The writer is left open: the child ends without closing it.
  });
  ASSERT_TRUE(r.filtered) << "could not install the seccomp filter";
  EXPECT_EQ(r.failures, 0);
  EXPECT_EQ(r.trapped, 0) << "first system call on the simulation thread: " << r.first_nr;
  EXPECT_EQ(r.stalls, 0u);  // the measured loop never waited for the queue
  EXPECT_EQ(r.cycles, kWarm + kMeasured);
}

// The filter must catch what it claims to: a system call made after it is
// installed is counted (the call itself is not executed).
TEST(WriterSyscalls, TheFilterCountsASystemCall) {
  ASSERT_NE(kAuditArch, 0u);
  const Report r = run_filtered_child([](Report &rep) {
    rep.filtered = trap_syscalls_on_this_thread();
    if (rep.filtered) syscall(SYS_getpid);
  });
  ASSERT_TRUE(r.filtered);
  EXPECT_EQ(r.trapped, 1);
  EXPECT_EQ(r.first_nr, SYS_getpid);
}

}  // namespace
