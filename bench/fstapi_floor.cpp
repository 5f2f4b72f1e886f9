// fstapi on its own: the floor under `uscope export --to fst` (issue 14's
// FST figure; docs/export.md "FST and VCD").
//
//   uscope export trace.uscope --to vcd -o w.vcd
//   build/release/bench/uscope_bench_fstapi_floor w.vcd [out.fst]
//
// The VCD export holds the same signals and value changes as the FST export
// of the same window (one signal model feeds both writers). They are read
// into memory first, untimed; then the timed part hands them to fstapi the
// way the FST writer does (LZ4 blocks, a block every 4 MiB of changes,
// fstapi's parallel mode off, each value as its '0'/'1' text), on one
// thread, with no trace decoding at all. The export cannot take less wall
// time than this while fstapi's writer is one thread: the export's figure
// against this one is the share that is ours.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fstapi.h"

namespace {

struct Change {
  uint32_t sig;  // kTime: v is a time
  uint32_t width;
  uint64_t v;
};
constexpr uint32_t kTime = UINT32_MAX;

// The VCD writer's identifier codes: base 94 over '!'..'~', least
// significant digit first (src/export/waveform.cpp VcdSink).
uint32_t id_of(const char *p, const char *end) {
  uint32_t v = 0, scale = 1;
  for (; p < end; ++p, scale *= 94) v += static_cast<uint32_t>(*p - '!') * scale;
  return v;
}

bool read_vcd(const char *path, std::vector<uint32_t> *widths, std::vector<Change> *out) {
  FILE *f = std::fopen(path, "rb");
  if (!f) return false;
  std::vector<char> line(1 << 16);
  bool in_comment = false;  // a $comment block's text spans lines
  while (std::fgets(line.data(), static_cast<int>(line.size()), f)) {
    const char *p = line.data();
    const char *end = p + std::strlen(p);
    while (end > p && (end[-1] == '\n' || end[-1] == '\r')) --end;
    if (end == p) continue;
    if (in_comment || std::strncmp(p, "$comment", 8) == 0) {
      in_comment = std::strstr(p, "$end") == nullptr;
      continue;
    }
    if (*p == '$') {
      unsigned width = 0;
      char id[16];
      if (std::sscanf(p, "$var wire %u %15s", &width, id) == 2) {
        const uint32_t k = id_of(id, id + std::strlen(id));
        if (k >= widths->size()) widths->resize(k + 1, 0);
        (*widths)[k] = width;
      }
      continue;
    }
    if (*p == '#') {
      out->push_back({kTime, 0, std::strtoull(p + 1, nullptr, 10)});
      continue;
    }
    uint64_t v = 0;
    const char *id = p + 1;
    if (*p == 'b') {
      for (++p; p < end && *p != ' '; ++p) v = v << 1 | static_cast<uint64_t>(*p == '1');
      id = p + 1;
    } else {
      v = *p == '1';
    }
    const uint32_t k = id_of(id, end);
    if (k >= widths->size() || (*widths)[k] == 0) {
      std::fclose(f);
      std::fprintf(stderr, "%s: a value change of an undeclared signal\n", path);
      return false;
    }
    out->push_back({k, (*widths)[k], v});
  }
  std::fclose(f);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s WINDOW.vcd [OUT.fst]   (WINDOW.vcd: from uscope export --to vcd)\n", argv[0]);
    return 2;
  }
  const std::string out = argc > 2 ? argv[2] : std::string(argv[1]) + ".floor.fst";
  std::vector<uint32_t> widths;
  std::vector<Change> changes;
  if (!read_vcd(argv[1], &widths, &changes)) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  uint64_t values = 0;
  for (const Change &c : changes) values += c.sig != kTime;

  // A byte's 8 bits as '0'/'1', most significant first (as the FST writer makes them).
  static char bits[256][8];
  for (unsigned x = 0; x < 256; ++x)
    for (unsigned b = 0; b < 8; ++b) bits[x][7 - b] = static_cast<char>('0' + (x >> b & 1));

  const auto t0 = std::chrono::steady_clock::now();
  void *ctx = fstWriterCreate(out.c_str(), 1);
  if (!ctx) {
    std::fprintf(stderr, "cannot create %s\n", out.c_str());
    return 1;
  }
  fstWriterSetTimescale(ctx, -12);
  fstWriterSetPackType(ctx, FST_WR_PT_LZ4);
  fstWriterSetParallelMode(ctx, 0);
  std::vector<fstHandle> handles;
  for (size_t k = 0; k < widths.size(); ++k)
    handles.push_back(fstWriterCreateVar(ctx, FST_VT_VCD_WIRE, FST_VD_IMPLICIT, widths[k] ? widths[k] : 1,
                                         ("s" + std::to_string(k)).c_str(), 0));
  constexpr uint64_t kBlockBytes = 4 << 20;  // the FST writer's block
  uint64_t pending = 0;
  char text[64];
  for (const Change &c : changes) {
    if (c.sig == kTime) {
      if (pending >= kBlockBytes) {
        fstWriterFlushContext(ctx);
        pending = 0;
      }
      fstWriterEmitTimeChange(ctx, c.v);
      continue;
    }
    char *end = text + c.width;
    uint64_t v = c.v;
    while (end - text >= 8) {
      end -= 8;
      std::memcpy(end, bits[v & 0xff], 8);
      v >>= 8;
    }
    while (end > text) {
      *--end = static_cast<char>('0' + (v & 1));
      v >>= 1;
    }
    fstWriterEmitValueChange(ctx, handles[c.sig], text);
    pending += c.width + 10;
  }
  fstWriterClose(ctx);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fstapi alone: %.3f s for %zu signals, %llu value changes, %llu times (%s)\n", s, widths.size(),
              static_cast<unsigned long long>(values), static_cast<unsigned long long>(changes.size() - values),
              out.c_str());
  return 0;
}
