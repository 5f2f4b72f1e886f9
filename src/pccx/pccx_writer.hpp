// Streaming .pccx writer. The caller's thread (a simulation hook) only copies
// fixed-size records into a preallocated single-producer single-consumer ring
// (no allocation, no lock, no system call in steady state); a background
// encoder thread turns them into the bincode / flatbuf / raw payload, writes
// the file and hashes it. close() patches the bincode counts, hashes the
// payload and writes the JSON header into the space reserved at open.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "io/replace_file.hpp"
#include "pccx/pccx.h"
#include "io/background_writer.hpp"

namespace uscope::pccx {

class Writer {
 public:
  // What a bincode payload's 16-byte prefix (NpuTrace.total_cycles, the
  // event count; pccx-format.md) is expected to be at close, when the caller
  // knows (a conversion from a .pccx file gives back its events): the
  // checksum is then hashed as the payload is written, and the pass that
  // reads the payload back to hash it after patching the prefix (FNV-1a runs
  // front to back, ~0.7 GB/s) is needed only if the guess was wrong.
  struct Expect {
    uint64_t total_cycles, events;
  };
  Writer(const char *path, const pccx_writer_options_t *opts, const Expect *expect = nullptr);
  ~Writer();
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  uscope_status_t event(uint32_t core, uint64_t start, uint64_t dur, uint32_t type,
                        const char *api) noexcept;
  uscope_status_t raw(const void *data, size_t n) noexcept;
  uscope_status_t set_total_cycles(uint64_t c) noexcept;
  uscope_status_t finish();
  void stats(pccx_writer_stats_t *out) const;
  const char *error() const;

 private:
  // Ring records (8-byte aligned):
  //   event: u8 tag=1, u8 0, u16 name_len, u32 core, u64 start, u64 dur,
  //          u32 type, u32 0, then name_len bytes padded to 8;
  //   raw:   u8 tag=2, u8[3] 0, u32 n, then n bytes padded to 8;
  //   pad:   u8 0xFF: continue at the start of the ring.
  static constexpr uint8_t kEv = 1, kRaw = 2, kPad = 0xFF;
  static constexpr size_t kEvSize = 32;
  static constexpr size_t kRawChunk = 64 * 1024;

  uint8_t *reserve(size_t bytes) noexcept;  // nullptr: dropped (DROP mode) or stopping
  void consume(const uint8_t *rec, size_t &len);

  // The consumer of queue_ (io/background_writer.hpp), on its thread.
  friend class uscope::BackgroundWriter;
  uint64_t drain(uint64_t pos, uint64_t end);
  bool failed(const std::exception &e) noexcept;
  bool poll() noexcept { return false; }  // one ring: nothing else to do
  bool may_park() noexcept { return true; }
  void drained() noexcept { flush_out(); }
  // Progress is reported every 64 KiB of records.
  static constexpr uint64_t kProgressStep = 64u << 10;

  void out(const void *p, size_t n);
  void flush_out();
  void io_fail(const char *what);
  void set_sticky(uscope_status_t s, const std::string &msg);
  std::string render_json(uint64_t cycles, uint32_t cores, uint64_t bytes, uint64_t sum) const;
  void pwrite_all(uint64_t off, const void *p, size_t n);

  // Options.
  uint32_t encoding_;
  std::string lab_version_, isa_version_, peak_tops_json_;
  uint32_t mac_rows_, mac_cols_, cores_opt_, clock_mhz_, backpressure_;
  uint64_t reserved_json_ = 0;

  // Producer side.
  uint64_t head_ = 0;           // next write position (monotonic)
  uint64_t published_ = 0;      // last position made visible to the encoder thread
  uint64_t cached_consumed_ = 0;
  // The producer publishes every 16 KiB, not every event: a store to the
  // shared counter per event keeps its cache line moving between the cores
  // and wakes the encoder for each 32-byte record (the µScope writer does
  // the same, writer.hpp kPublishBatch).
  static constexpr uint64_t kPublishBatch = 16 * 1024;
  void publish() noexcept {
    published_ = head_;
    queue_.publish(head_);
  }
  uint64_t total_cycles_ = 0;
  bool total_set_ = false;
  bool finished_ = false;
  uscope_status_t finish_status_ = USCOPE_OK;
  std::atomic<uint64_t> events_{0}, api_names_{0}, raw_bytes_{0}, dropped_events_{0},
      dropped_raw_{0}, errors_{0}, stalls_{0}, stall_ns_{0};

  // Encoder side.
  int fd_ = -1;
  // Not a vector: its pages are touched by the encoder as it fills them, not
  // zeroed at open (a small job uses a few of its up to 1 MiB).
  std::unique_ptr<uint8_t[]> obuf_;
  size_t obuf_cap_ = 0;
  size_t olen_ = 0;
  uint64_t file_pos_ = 0;       // bytes written to the OS
  uint64_t payload_start_ = 0;
  uint64_t hash_ = 0;           // streaming FNV (flatbuf, raw; bincode with an Expect)
  bool expect_ = false;         // bincode: hash_ streams from the expected prefix
  Expect expected_{};
  uint64_t max_end_ = 0;
  uint32_t max_core_ = 0;
  bool any_event_ = false;
  std::vector<std::pair<uint32_t, std::string>> names_;  // flatbuf trailer
  std::atomic<uint64_t> written_{0}, payload_bytes_{0}, file_bytes_{0};
  uint64_t checksum_ = 0;

  // Sticky error: status published with release after the message.
  std::atomic<uscope_status_t> sticky_{USCOPE_OK};
  std::string sticky_msg_;
  std::string path_;
  ReplacingFile replace_;  // fd_'s temporary file, renamed onto path_ at close

  // The ring and the encoder thread (the library's one background-writer
  // engine). Last, so that it is destroyed (the thread joined) first.
  BackgroundWriter queue_;
};

}  // namespace uscope::pccx

struct pccx_writer {
  explicit pccx_writer(const char *path, const pccx_writer_options_t *o) : impl(path, o) {}
  uscope::pccx::Writer impl;
};
