#include "support/trace_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "format/checksum.hpp"
#include "base/error.hpp"
#include "format/wire.hpp"
#include "reader/trace_reader.hpp"

namespace uscope::test {

std::vector<uint8_t> read_bytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(USCOPE_ERR_IO, "cannot open %s", path.c_str());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

std::string hex16(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

uint64_t items_digest(const std::vector<Item> &items, uint64_t h) {
  std::string line;
  char buf[128];
  for (const auto &i : items) {
    if (i.is_event) {
      std::snprintf(buf, sizeof buf, "E %llu %u ", static_cast<unsigned long long>(i.time_ps), i.event_id);
      line = buf;
      for (uint8_t b : i.payload) {
        std::snprintf(buf, sizeof buf, "%02x", b);
        line += buf;
      }
      line += '\n';
    } else {
      std::snprintf(buf, sizeof buf, "O %llu %u %u %u %u %llu\n",
                    static_cast<unsigned long long>(i.time_ps), i.op.action, i.op.storage_id,
                    i.op.slot, i.op.field, static_cast<unsigned long long>(i.op.value));
      line = buf;
    }
    h = fnv1a64(line.data(), line.size(), h);
  }
  return h;
}

const uint8_t *TraceFile::chunk_payload(uint16_t type) const {
  for (const auto &c : chunks)
    if (c.type == type) return bytes.data() + c.offset;
  return nullptr;
}
uint32_t TraceFile::chunk_size(uint16_t type) const {
  for (const auto &c : chunks)
    if (c.type == type) return c.size;
  return 0;
}

TraceFile read_trace_file(const std::string &path) {
  // Everything is decoded by the library's reader (one decoder per
  // structure); this only copies what it found into plain vectors that the
  // tests can compare, plus the file's bytes for byte-level checks.
  TraceReader r(path);
  TraceFile t;
  t.bytes = read_bytes(path);
  t.header = r.header();
  t.chunks = r.chunks();
  t.schema = r.schema();
  t.dut = r.dut();
  t.checkpoint_interval_ps = r.checkpoint_interval_ps();
  t.sections = r.sections();
  t.segment_table = r.segment_table();
  t.strings = r.strings();
  if (r.summary()) t.summary = r.load_summary();
  if (t.bytes.size() < r.file_size()) fail(USCOPE_ERR_IO, "%s shrank while it was read", path.c_str());
  std::vector<StorageState> states = r.initial_state();
  for (size_t i = 0; i < r.segments().size(); ++i) {
    const SegmentInfo &info = r.segments()[i];
    Segment s;
    s.offset = info.offset;
    s.header = info.header;
    const auto ck = t.bytes.begin() + static_cast<ptrdiff_t>(info.offset + wire::kSegmentHeaderSize);
    s.checkpoint.assign(ck, ck + info.header.checkpoint_size);
    const uint8_t *d = r.deltas(i);
    s.deltas.assign(d, d + info.header.deltas_raw_size);
    struct V {
      Segment &s;
      uint32_t frame_index() const { return static_cast<uint32_t>(s.frame_times.size() - 1); }
      void frame(uint64_t time) { s.frame_times.push_back(time); }
      void op(uint64_t time, const DeltaOp &o) {
        Item it;
        it.frame = frame_index();
        it.time_ps = time;
        it.op = o;
        s.items.push_back(it);
      }
      void event(uint64_t time, uint16_t id, const uint8_t *p, uint32_t n) {
        Item it;
        it.frame = frame_index();
        it.is_event = true;
        it.time_ps = time;
        it.event_id = id;
        it.payload.assign(p, p + n);
        s.items.push_back(std::move(it));
      }
    } v{s};
    r.replay(i, states, v);
    t.segments.push_back(std::move(s));
  }
  return t;
}

TraceFile parse_trace_file(const std::vector<uint8_t> &bytes) {
  std::string path = (std::filesystem::temp_directory_path() / "uscope_trace_file_XXXXXX").string();
  const int fd = mkstemp(path.data());
  if (fd < 0) fail(USCOPE_ERR_IO, "cannot make a scratch file in %s", path.c_str());
  struct Unlink {  // on every way out, thrown errors included
    const std::string &p;
    ~Unlink() { std::remove(p.c_str()); }
  } unlink_it{path};
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  ::close(fd);
  if (done != bytes.size()) fail(USCOPE_ERR_IO, "cannot write the scratch file %s", path.c_str());
  return read_trace_file(path);
}

}  // namespace uscope::test
