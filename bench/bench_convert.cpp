// NPU JSONL conversion throughput (Google Benchmark).
//
// Generates a realistic NPU JSONL stream — every event type, dominated by
// SRAM_ACCESS, TE and DMA events, with LLM metadata (layer, head, phase,
// token, model) — of USCOPE_BENCH_JSONL_MB megabytes (default 1024) into a
// temporary file, then measures, each in a forked child so that its peak
// RSS is its own (wait4 rusage):
//   BM_Baseline_OnDemandParse  simdjson On-Demand over every line, touching
//                              every field, no conversion (the ceiling);
//   BM_JsonlToPccx             uscope_jsonl_to_pccx;
//   BM_JsonlToUscope           uscope_jsonl_to_uscope;
//   BM_NpuReport               uscope_convert_npu_report;
//   BM_Convert/<in>_to_<out>   every direction of the conversion matrix
//                              through uscope_convert (issue 19: each one
//                              >= 300 MB/s of input on a 1 GB file, peak
//                              RSS <= 128 MB).
// The .uscope and .pccx inputs of the matrix are converted once from the
// generated JSONL (BM_Convert/pccx1g_to_*: a 1 GB .pccx written with the
// pccx writer, USCOPE_BENCH_PCCX_MB), in a child of their own, before their first benchmark
// (outside every timed region; a child, so that the parent, whose pages
// every later child starts with, keeps no conversion's heap).
// Counters of the matrix: in_MB_per_s (input file bytes / wall),
// jsonl_MB_per_s (bytes of the generated JSONL / wall: the same trace in
// every format, the fair figure when the input is a compressed encoding of
// it), events_per_s, peak_rss_MB, in_MB and out_MB (file sizes). A
// direction the library does not support (USCOPE_ERR_UNSUPPORTED) is
// skipped with the library's message; any other failure is reported as
// "the conversion failed: <message>", which fails the ctest smoke run.
// The files go to $TMPDIR (default /tmp) and are removed at the end, except
// the input when USCOPE_BENCH_JSONL_KEEP names a path to copy it to (for
// profiling the CLI on the same data).
#include <benchmark/benchmark.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <cstring>
#include <string>

#include <pccx/pccx.h>
#include <uscope/convert.h>

namespace {

std::string g_dir, g_jsonl;
uint64_t g_bytes = 0;

void generate(const std::string &path, uint64_t target) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  std::mt19937_64 rng(42);
  const char *phases[] = {"QKV_PROJ", "ATTENTION_SCORE", "ATTENTION_APPLY", "MLP", "LN1"};
  std::string buf;
  buf.reserve(1 << 22);
  char b[640];
  uint64_t t = 0, written = 0;
  uint32_t cmd = 0, job = 0, tx = 0;
  auto put = [&](int n) {
    buf.append(b, static_cast<size_t>(n));
    if (buf.size() > (1 << 22) - 1024) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      written += buf.size();
      buf.clear();
    }
  };
  put(std::snprintf(b, sizeof b, R"({"event_type":"TRACE_META","version":"1.0","sim_config":{"te_tflops":64,"sram_size":8388608}})" "\n"));
  while (written + buf.size() < target) {
    const char *ph = phases[cmd % 5];
    const unsigned layer = cmd / 5 % 32, head = cmd % 16, tok = cmd / 160;
    put(std::snprintf(b, sizeof b, R"({"event_type":"CMD_ENQUEUE","t_cycle":%llu,"sim_id":"run_2025_11_25_01","cmd_id":%u,"cmd_type":"MATMUL","source":"ISA","token":%u,"desc_addr":140737488355328,"layer_id":%u,"block_id":%u,"phase":"%s","model_name":"llama2_7b"})" "\n",
                      (unsigned long long)t, cmd, tok, layer, layer, ph));
    put(std::snprintf(b, sizeof b, R"({"event_type":"CMD_START","t_cycle":%llu,"sim_id":"run_2025_11_25_01","cmd_id":%u})" "\n", (unsigned long long)++t, cmd));
    for (int j = 0; j < 4; ++j, ++job, ++tx) {
      put(std::snprintf(b, sizeof b, R"({"event_type":"JOB_ISSUE","t_cycle":%llu,"sim_id":"run_2025_11_25_01","job_id":%u,"cmd_id":%u,"job_type":"TE_GEMM","tile_id":%d,"vec_chunk_id":null,"phase":"%s","layer_id":%u,"head_id":%u,"token_idx":%u,"seq_len":%u,"model_name":"llama2_7b","precision":"BF16"})" "\n",
                        (unsigned long long)t, job, cmd, j, ph, layer, head, tok, tok + 1));
      put(std::snprintf(b, sizeof b, R"({"event_type":"DMA_START","t_cycle":%llu,"sim_id":"run_2025_11_25_01","tx_id":%u,"channel":%d,"direction":"DRAM_TO_SRAM","src_addr":%llu,"dst_addr":%u,"size_bytes":65536,"cmd_id":%u,"job_id":%u,"phase":"%s","layer_id":%u,"head_id":%u,"token_idx":%u,"seq_len":%u,"model_name":"llama2_7b","precision":"BF16"})" "\n",
                        (unsigned long long)t, tx, j, (unsigned long long)(140737488355328ull + (rng() & 0xFFFFF000)), 4096u * j, cmd, job, ph, layer, head, tok, tok + 1));
      put(std::snprintf(b, sizeof b, R"({"event_type":"DRAM_TX_START","t_cycle":%llu,"sim_id":"run_2025_11_25_01","tx_id":%u,"channel":%d,"size_bytes":65536,"cmd_id":%u})" "\n", (unsigned long long)t + 1, tx, j, cmd));
      put(std::snprintf(b, sizeof b, R"({"event_type":"NOC_TX_START","t_cycle":%llu,"sim_id":"run_2025_11_25_01","tx_id":%u,"link_id":%d,"size_bytes":65536,"cmd_id":%u})" "\n", (unsigned long long)t + 1, tx, j, cmd));
      t += 20;
      put(std::snprintf(b, sizeof b, R"({"event_type":"NOC_TX_END","t_cycle":%llu,"sim_id":"run_2025_11_25_01","tx_id":%u,"link_id":%d})" "\n", (unsigned long long)t, tx, j));
      put(std::snprintf(b, sizeof b, R"({"event_type":"DRAM_TX_END","t_cycle":%llu,"sim_id":"run_2025_11_25_01","tx_id":%u,"channel":%d})" "\n", (unsigned long long)t, tx, j));
      put(std::snprintf(b, sizeof b, R"({"event_type":"DMA_END","t_cycle":%llu,"sim_id":"run_2025_11_25_01","tx_id":%u,"channel":%d,"cmd_id":%u,"job_id":%u})" "\n", (unsigned long long)++t, tx, j, cmd, job));
      put(std::snprintf(b, sizeof b, R"({"event_type":"TE_START","t_cycle":%llu,"sim_id":"run_2025_11_25_01","job_id":%u,"cmd_id":%u,"m":128,"n":128,"k":256,"tile_m":64,"tile_n":64,"tile_k":64,"phase":"%s","layer_id":%u,"head_id":%u,"token_idx":%u,"seq_len":%u,"model_name":"llama2_7b","precision":"BF16"})" "\n",
                        (unsigned long long)t, job, cmd, ph, layer, head, tok, tok + 1));
      // SRAM traffic dominates: one access per cycle of the GEMM.
      for (int a = 0; a < 24; ++a) {
        ++t;
        const unsigned bank = static_cast<unsigned>(rng() % 16);
        const bool conflict = rng() % 16 == 0;
        put(std::snprintf(b, sizeof b, R"({"event_type":"SRAM_ACCESS","t_cycle":%llu,"sim_id":"run_2025_11_25_01","addr":%u,"bank_id":%u,"access_type":"%s","by":"%s","conflict":%s,"cmd_id":%u,"job_id":%u})" "\n",
                          (unsigned long long)t, (unsigned)(rng() & 0x7FFFC0), bank, a % 3 ? "READ" : "WRITE", a % 4 ? "TE" : "DMA", conflict ? "true" : "false", cmd, job));
        if (conflict)
          put(std::snprintf(b, sizeof b, R"({"event_type":"SRAM_CONFLICT","t_cycle":%llu,"sim_id":"run_2025_11_25_01","bank_id":%u,"num_requests":2,"allowed":1,"stalled_clients":["VE","DMA"],"cmd_id":%u})" "\n", (unsigned long long)t, bank, cmd));
      }
      put(std::snprintf(b, sizeof b, R"({"event_type":"TE_END","t_cycle":%llu,"sim_id":"run_2025_11_25_01","job_id":%u,"cmd_id":%u,"mac_count":4194304,"latency_cycles":24,"phase":"%s","layer_id":%u,"head_id":%u,"token_idx":%u,"seq_len":%u,"model_name":"llama2_7b","precision":"BF16"})" "\n",
                        (unsigned long long)++t, job, cmd, ph, layer, head, tok, tok + 1));
      put(std::snprintf(b, sizeof b, R"({"event_type":"JOB_DONE","t_cycle":%llu,"sim_id":"run_2025_11_25_01","job_id":%u,"cmd_id":%u,"job_type":"TE_GEMM","latency_cycles":46})" "\n", (unsigned long long)t, job, cmd));
    }
    ++job;
    put(std::snprintf(b, sizeof b, R"({"event_type":"VE_START","t_cycle":%llu,"sim_id":"run_2025_11_25_01","job_id":%u,"cmd_id":%u,"op_type":"SOFTMAX","len":4096,"batch":1,"phase":"%s","layer_id":%u})" "\n", (unsigned long long)t, job, cmd, ph, layer));
    t += 8;
    put(std::snprintf(b, sizeof b, R"({"event_type":"VE_END","t_cycle":%llu,"sim_id":"run_2025_11_25_01","job_id":%u,"cmd_id":%u,"latency_cycles":8})" "\n", (unsigned long long)t, job, cmd));
    if (cmd % 64 == 63)
      put(std::snprintf(b, sizeof b, R"({"event_type":"WARN","t_cycle":%llu,"sim_id":"run_2025_11_25_01","component":"TE","code":"LOW_UTIL","msg":"TE utilization below 50%% in last 1000 cycles","layer_id":%u})" "\n", (unsigned long long)t, layer));
    put(std::snprintf(b, sizeof b, R"({"event_type":"CMD_END","t_cycle":%llu,"sim_id":"run_2025_11_25_01","cmd_id":%u,"status":"OK"})" "\n", (unsigned long long)++t, cmd));
    put(std::snprintf(b, sizeof b, R"({"event_type":"IRQ_EMIT","t_cycle":%llu,"sim_id":"run_2025_11_25_01","cmd_id":%u,"token":%u,"irq_line":3})" "\n", (unsigned long long)t, cmd, tok));
    put(std::snprintf(b, sizeof b, R"({"event_type":"TOKEN_COMPLETE","t_cycle":%llu,"sim_id":"run_2025_11_25_01","token":%u,"cmd_id":%u,"status":"OK"})" "\n", (unsigned long long)t, tok, cmd));
    if (cmd % 997 == 996)
      put(std::snprintf(b, sizeof b, R"({"event_type":"ERROR","t_cycle":%llu,"sim_id":"run_2025_11_25_01","component":"DMA","code":"ADDR_ALIGN","msg":"unaligned DMA source address","cmd_id":%u,"job_id":%u})" "\n", (unsigned long long)t, cmd, job));
    ++cmd;
    ++job;
  }
  std::fwrite(buf.data(), 1, buf.size(), f);
  written += buf.size();
  std::fclose(f);
  g_bytes = written;
}

// The baseline: On-Demand over every line, every field read as its JSON
// type, no conversion.
int baseline(const char *path) {
  simdjson::padded_string_view dummy;
  (void)dummy;
  FILE *f = std::fopen(path, "rb");
  if (!f) return 1;
  simdjson::ondemand::parser p;
  std::string line;
  line.reserve(1 << 16);
  char *l = nullptr;
  size_t cap = 0;
  ssize_t n;
  uint64_t sum = 0;
  std::string padded;
  while ((n = getline(&l, &cap, f)) > 0) {
    padded.assign(l, static_cast<size_t>(n));
    padded.append(simdjson::SIMDJSON_PADDING, ' ');
    simdjson::ondemand::document doc;
    if (p.iterate(padded.data(), static_cast<size_t>(n), padded.size()).get(doc)) return 2;
    simdjson::ondemand::object o;
    if (doc.get_object().get(o)) return 2;
    for (auto fr : o) {
      simdjson::ondemand::field fd;
      if (std::move(fr).get(fd)) return 2;
      simdjson::ondemand::value v = fd.value();
      simdjson::ondemand::json_type jt;
      if (v.type().get(jt)) return 2;
      if (jt == simdjson::ondemand::json_type::number) {
        uint64_t x;
        if (!v.get_uint64().get(x)) sum += x;
      } else if (jt == simdjson::ondemand::json_type::string) {
        std::string_view s;
        if (!v.get_string().get(s)) sum += s.size();
      }
    }
  }
  std::free(l);
  std::fclose(f);
  return sum ? 0 : 3;
}

// Runs fn in a child; returns wall seconds and its peak RSS (MB).
template <class F>
bool in_child(F fn, double *secs, double *rss_mb) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) _exit(fn());
  int st = 0;
  struct rusage ru {};
  if (wait4(pid, &st, 0, &ru) != pid) return false;
  *secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

template <class F>
void run(benchmark::State &state, F fn) {
  double rss = 0;
  for (auto _ : state) {
    double secs = 0;
    if (!in_child(fn, &secs, &rss)) {
      state.SkipWithError("the conversion failed");
      return;
    }
    state.SetIterationTime(secs);
  }
  state.SetBytesProcessed(static_cast<int64_t>(g_bytes) * state.iterations());
  state.counters["input_MB"] = static_cast<double>(g_bytes) / 1e6;
  state.counters["peak_rss_MB"] = rss;
}

void BM_Baseline_OnDemandParse(benchmark::State &state) {
  run(state, [] { return baseline(g_jsonl.c_str()); });
}
void BM_JsonlToPccx(benchmark::State &state) {
  run(state, [] {
    uscope_convert_stats_t st{};
    st.struct_size = sizeof st;
    const uscope_status_t s = uscope_jsonl_to_pccx(&st, g_jsonl.c_str(), (g_dir + "/out.pccx").c_str(), nullptr);
    return s == USCOPE_OK && st.skipped == 0 ? 0 : 1;
  });
}
void BM_JsonlToUscope(benchmark::State &state) {
  run(state, [] {
    uscope_convert_stats_t st{};
    st.struct_size = sizeof st;
    const uscope_status_t s = uscope_jsonl_to_uscope(&st, g_jsonl.c_str(), (g_dir + "/out.uscope").c_str(), nullptr);
    if (s != USCOPE_OK || st.skipped) std::fprintf(stderr, "jsonl->uscope: %d %s\n", s, uscope_last_error());
    return s == USCOPE_OK && st.skipped == 0 ? 0 : 1;
  });
}
void BM_NpuReport(benchmark::State &state) {
  run(state, [] {
    char *text = nullptr;
    const uscope_status_t s = uscope_convert_npu_report(&text, nullptr, g_jsonl.c_str(), 0, nullptr, 1);
    uscope_convert_free(text);
    return s == USCOPE_OK ? 0 : 1;
  });
}
BENCHMARK(BM_Baseline_OnDemandParse)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_JsonlToPccx)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_JsonlToUscope)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_NpuReport)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);

// ---- The conversion matrix through uscope_convert ----

// What a child reports to the parent: a MAP_SHARED page set up in main(),
// written by the child before it exits (the parent reads it after wait4).
// status is kNotRun until the child's uscope_convert returns.
constexpr int32_t kNotRun = INT32_MIN;
struct ChildReport {
  int32_t status;
  uscope_convert_stats_t stats;
  char message[2048];
};
ChildReport *g_report = nullptr;

uint64_t file_bytes(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Before each child: no stale report survives a child that dies early.
void reset_report() {
  std::memset(g_report, 0, sizeof *g_report);
  g_report->status = kNotRun;
}

// One uscope_convert call, its status, stats and message into g_report.
// Returns the child's exit code: 0 on success.
int convert_in_child(const std::string &in, uint32_t fi, const std::string &out, uint32_t fo) {
  g_report->stats.struct_size = sizeof g_report->stats;
  const uscope_status_t s = uscope_convert(&g_report->stats, in.c_str(), fi, out.c_str(), fo, nullptr);
  g_report->status = s;
  if (s != USCOPE_OK) std::snprintf(g_report->message, sizeof g_report->message, "%s", uscope_last_error());
  return s == USCOPE_OK && g_report->stats.skipped == 0 ? 0 : 1;
}

// The message of a failed child, for SkipWithError. Unsupported directions
// (the lead adds them in parallel) say so; anything else is a failure.
std::string failure_message() {
  if (g_report->status == kNotRun) return "the conversion failed: the child died before uscope_convert returned";
  if (g_report->status == USCOPE_ERR_UNSUPPORTED)
    return std::string("unsupported direction: ") + g_report->message;
  if (g_report->status == USCOPE_OK)
    return "the conversion failed: " + std::to_string(g_report->stats.skipped) + " line(s) skipped";
  return "the conversion failed: status " + std::to_string(g_report->status) + ": " + g_report->message;
}

struct Input {
  const char *name;  // "jsonl", "uscope", "pccx"
  uint32_t format;
  std::string path;
  bool tried = false;
  std::string error;  // why it could not be produced
};
Input g_inputs[] = {{"jsonl", USCOPE_CONVERT_JSONL, {}, true, {}},
                    {"uscope", USCOPE_CONVERT_USCOPE, {}, false, {}},
                    {"pccx", USCOPE_CONVERT_PCCX, {}, false, {}},
                    {"pccx1g", USCOPE_CONVERT_PCCX, {}, false, {}}};
constexpr int kPccx1g = 3;

// A .pccx file of USCOPE_BENCH_PCCX_MB megabytes (default 1024) written
// with the pccx C writer: the generated JSONL's .pccx is 4x smaller than the
// JSONL, so the pccx-input directions get a 1 GB file of their own. The
// events are what the converters write (commands, jobs, TE, DMA, DRAM, NoC,
// SRAM instants, stalls, IRQs), in start order, on 32 cores.
int write_pccx_1g(const std::string &path) {
  const char *mb = std::getenv("USCOPE_BENCH_PCCX_MB");
  const uint64_t target = (mb ? std::strtoull(mb, nullptr, 10) : 1024) << 20;
  pccx_writer_options_t o;
  pccx_writer_options_init(&o);
  o.cores = 32;
  pccx_writer_t *w = nullptr;
  if (pccx_writer_open(&w, path.c_str(), &o) != USCOPE_OK) return 1;
  const char *phases[] = {"QKV_PROJ", "ATTENTION_SCORE", "ATTENTION_APPLY", "MLP", "LN1"};
  uint64_t t = 0, n = 0;
  bool ok = true;
  auto ev = [&](uint32_t core, uint64_t start, uint64_t dur, uint32_t type, const char *name) {
    ok = ok && pccx_writer_event(w, core, start, dur, type, name) == USCOPE_OK;
    ++n;
  };
  for (uint32_t cmd = 0; ok; ++cmd) {
    // About 58 bytes an event in bincode (pccx-format.md: core, type, start,
    // duration, the name and its option tag; measured): stop near the
    // target size.
    if (n * 58 >= target) break;
    const uint32_t core = cmd % 32;
    const char *ph = phases[cmd % 5];
    ev(core, t, 300, PCCX_EVENT_API_CALL, ph);
    for (int j = 0; j < 4; ++j) {
      ev(core, t + 1, 46, PCCX_EVENT_API_CALL, "JOB:TE_GEMM");
      ev(core, t + 1, 20, PCCX_EVENT_DMA_READ, ph);
      ev(core, t + 2, 19, PCCX_EVENT_UNKNOWN, "DRAM_TX");
      ev(core, t + 2, 19, PCCX_EVENT_UNKNOWN, "NOC_TX");
      ev(core, t + 22, 24, PCCX_EVENT_MAC_COMPUTE, ph);
      for (int a = 0; a < 24; ++a) {
        ev(core, t + 23 + a, 0, PCCX_EVENT_UNKNOWN, "SRAM_ACCESS");
        if (a % 16 == 5) ev(core, t + 23 + a, 0, PCCX_EVENT_SYSTOLIC_STALL, "SRAM_CONFLICT");
      }
      t += 47;
    }
    ev(core, t, 8, PCCX_EVENT_UNKNOWN, "VE");
    ev(core, t + 9, 0, PCCX_EVENT_BARRIER_SYNC, "IRQ_EMIT");
    ev(core, t + 9, 0, PCCX_EVENT_BARRIER_SYNC, "TOKEN_COMPLETE");
    t += 10;
  }
  return pccx_writer_close(w) == USCOPE_OK && ok ? 0 : 1;
}

// The input of a direction: the generated JSONL, or its .uscope / .pccx
// conversion made once, in a child, on first use (never timed).
const Input &input(int which) {
  Input &in = g_inputs[which];
  const uint32_t format = in.format;
  if (format == USCOPE_CONVERT_JSONL) {
    in.path = g_jsonl;
    return in;
  }
  if (in.tried) return in;
  in.tried = true;
  in.path = g_dir + "/input." + in.name + (which == kPccx1g ? ".pccx" : "");
  double secs = 0, rss = 0;
  reset_report();
  if (which == kPccx1g) {
    if (!in_child([&] { return write_pccx_1g(in.path); }, &secs, &rss))
      in.error = "writing the 1 GB .pccx input failed";
  } else if (!in_child([&] { return convert_in_child(g_jsonl, USCOPE_CONVERT_JSONL, in.path, format); }, &secs,
                       &rss)) {
    in.error = "making the ." + std::string(in.name) + " input: " + failure_message();
  }
  if (!in.error.empty()) {
  } else {
    std::fprintf(stderr, "made %s: %.1f MB in %.1f s\n", in.path.c_str(), static_cast<double>(file_bytes(in.path)) / 1e6,
                 secs);
  }
  return in;
}

// One direction: in_format's input converted to out_name (its format by
// out_format; ".jsonl.gz" writes gzip).
void convert_direction(benchmark::State &state, int which, uint32_t out_format, const char *out_name) {
  const Input &in = input(which);
  const uint32_t in_format = in.format;
  if (!in.error.empty()) {
    state.SkipWithError(in.error.c_str());
    return;
  }
  const std::string out = g_dir + "/" + out_name;
  double rss = 0, secs = 0;
  for (auto _ : state) {
    reset_report();
    const bool ok = in_child([&] { return convert_in_child(in.path, in_format, out, out_format); }, &secs, &rss);
    if (!ok) {
      state.SkipWithError(failure_message().c_str());
      std::remove(out.c_str());
      return;
    }
    state.SetIterationTime(secs);
  }
  const uint64_t in_bytes = file_bytes(in.path), out_bytes = file_bytes(out);
  std::remove(out.c_str());
  const uint64_t events = g_report->stats.events_in ? g_report->stats.events_in : g_report->stats.events_out;
  state.SetBytesProcessed(static_cast<int64_t>(in_bytes) * state.iterations());
  state.counters["in_MB_per_s"] = static_cast<double>(in_bytes) / 1e6 / secs;
  // The 1 GB .pccx is not the generated JSONL's trace: no JSONL-equivalent figure.
  if (which != kPccx1g) state.counters["jsonl_MB_per_s"] = static_cast<double>(g_bytes) / 1e6 / secs;
  state.counters["events_per_s"] = static_cast<double>(events) / secs;
  state.counters["peak_rss_MB"] = rss;
  state.counters["in_MB"] = static_cast<double>(in_bytes) / 1e6;
  state.counters["out_MB"] = static_cast<double>(out_bytes) / 1e6;
}

#define USCOPE_DIRECTION(NAME, IN, OUT, OUT_NAME)                                           \
  void BM_Convert_##NAME(benchmark::State &state) {                                         \
    convert_direction(state, IN, USCOPE_CONVERT_##OUT, OUT_NAME);                           \
  }                                                                                         \
  BENCHMARK(BM_Convert_##NAME)->Name("BM_Convert/" #NAME)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)

USCOPE_DIRECTION(jsonl_to_uscope, 0, USCOPE, "out.uscope");
USCOPE_DIRECTION(jsonl_to_pccx, 0, PCCX, "out.pccx");
USCOPE_DIRECTION(jsonl_to_jsonl, 0, JSONL, "out.jsonl");
USCOPE_DIRECTION(jsonl_to_jsonl_gz, 0, JSONL, "out.jsonl.gz");
USCOPE_DIRECTION(uscope_to_jsonl, 1, JSONL, "out.jsonl");
USCOPE_DIRECTION(uscope_to_pccx, 1, PCCX, "out.pccx");
USCOPE_DIRECTION(uscope_to_uscope, 1, USCOPE, "out.uscope");
USCOPE_DIRECTION(pccx_to_jsonl, 2, JSONL, "out.jsonl");
USCOPE_DIRECTION(pccx_to_uscope, 2, USCOPE, "out.uscope");
USCOPE_DIRECTION(pccx_to_pccx, 2, PCCX, "out.pccx");
USCOPE_DIRECTION(pccx1g_to_jsonl, kPccx1g, JSONL, "out.jsonl");
USCOPE_DIRECTION(pccx1g_to_uscope, kPccx1g, USCOPE, "out.uscope");
USCOPE_DIRECTION(pccx1g_to_pccx, kPccx1g, PCCX, "out.pccx");
#undef USCOPE_DIRECTION

}  // namespace

int main(int argc, char **argv) {
  const char *mb = std::getenv("USCOPE_BENCH_JSONL_MB");
  const uint64_t target = (mb ? std::strtoull(mb, nullptr, 10) : 1024) << 20;
  const char *tmp = std::getenv("TMPDIR");
  char templ[512];
  std::snprintf(templ, sizeof templ, "%s/uscope_bench_convert.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(templ)) return 1;
  // Shared with the children: they write their status and stats into it.
  void *shared = mmap(nullptr, sizeof(ChildReport), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return 1;
  g_report = static_cast<ChildReport *>(shared);
  g_dir = templ;
  g_jsonl = g_dir + "/npu.jsonl";
  generate(g_jsonl, target);
  std::fprintf(stderr, "generated %s: %.1f MB\n", g_jsonl.c_str(), static_cast<double>(g_bytes) / 1e6);
  if (const char *keep = std::getenv("USCOPE_BENCH_JSONL_KEEP")) {
    if (std::rename(g_jsonl.c_str(), keep) != 0 || link(keep, g_jsonl.c_str()) != 0) {
      std::fprintf(stderr, "cannot keep the input as %s\n", keep);
      return 1;
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::remove(g_jsonl.c_str());
  std::remove((g_dir + "/out.pccx").c_str());
  std::remove((g_dir + "/out.uscope").c_str());
  for (const Input &in : g_inputs)
    if (in.format != USCOPE_CONVERT_JSONL && !in.path.empty()) std::remove(in.path.c_str());
  rmdir(g_dir.c_str());
  return 0;
}
