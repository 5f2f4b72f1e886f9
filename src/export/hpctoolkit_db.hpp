// The HPCToolkit database v4 encoders (../shared/specs/hpctoolkit-db-formats.md):
// meta.db, profile.db, cct.db and trace.db from an in-memory model of the
// calling context tree, its metrics and profiles (Database), and trace
// lines streamed to per-line temporary files (TraceLines).
//
// The model is bounded by the firmware's code, not by the trace: one value
// per (profile, context, metric) is kept, whatever the number of
// instructions. The trace lines are the only part that grows with the
// trace, so they go to disk as they come and are appended into trace.db at
// the end.
//
// Where the spec contradicts itself the structure table wins over the
// prose (docs/export.md "HPCToolkit" lists each case): a structure's size
// field holds the END of its table (profile {PI} 40, cct {CI} 32, trace {TH}
// 24), and profile.db's szProfile follows nProfiles at 0x0c.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace uscope::exporter::hpctk {

constexpr uint32_t kNone = UINT32_MAX;

// meta.db Load Module / Source File / Function specifications.
struct Function {
  std::string name;
  uint32_t module = kNone;  // index into Database::modules
  uint64_t offset = 0;      // entry point within the module
  uint32_t file = kNone;    // index into Database::files
  uint32_t line = 0;
};

// meta.db Context Tree section: relation and lexicalType values.
enum Relation : uint8_t { kLexical = 0, kCall = 1, kInlinedCall = 2 };
enum Lexical : uint8_t { kFunction = 0, kLoop = 1, kLine = 2, kInstruction = 3 };

// A context; its ctxId is its index in Database::contexts.
struct Context {
  uint32_t parent = kNone;  // kNone: a root
  uint8_t relation = kLexical;
  uint8_t lexical = kFunction;
  uint32_t function = kNone;  // hasFunction
  uint32_t file = kNone;      // hasSrcLoc (with line)
  uint32_t line = 0;
  uint32_t module = kNone;  // hasPoint (with offset)
  uint64_t offset = 0;
};

// A profile (application thread, here a core or an NPU engine): its
// Hierarchical Identifier Tuple.
struct IdEntry {
  uint8_t kind = 0;  // index into kIdNames
  bool physical = false;
  uint32_t logical = 0;
  uint64_t physical_id = 0;
};

// The identifier kinds meta.db names (Hierarchical Identifier Names
// section), in HPCToolkit's own order so that its tools read the same names.
enum IdKind : uint8_t { kSummary = 0, kNode, kRank, kThread, kGpuDevice, kGpuContext, kGpuStream, kCore };
extern const char *const kIdNames[8];

struct Database {
  std::string title, description;
  std::vector<std::string> modules, files;
  std::vector<Function> functions;
  std::vector<Context> contexts;
  // Raw metric names ("cycles"). Metric m is exported in two propagation
  // scopes: "function" (exclusive, propMetricId 2m) and "execution"
  // (inclusive, 2m+1); each has one summary statistic, formula "$$"
  // combined by sum, whose statMetricId equals the propMetricId.
  std::vector<std::string> metrics;
  std::vector<std::vector<IdEntry>> profiles;  // profIndex - 1 (0 is the summary profile)
  // Raw ("point") values: point[p][ctx * metrics.size() + m] for profile p
  // (index into profiles). Sized by resize_values().
  std::vector<std::vector<double>> point;

  void resize_values();
  void add(uint32_t profile, uint32_t ctx, uint32_t metric, double v) {
    point[profile][size_t(ctx) * metrics.size() + metric] += v;
  }
  // Propagated values of one profile: exclusive[ctx*M+m] ("function") and
  // inclusive[ctx*M+m] ("execution").
  void propagate(uint32_t profile, std::vector<double> &exclusive, std::vector<double> &inclusive) const;
};

// The file images. Throws Error(INVALID_ARGUMENT) on a malformed model (a
// parent after its child, an index out of range).
std::string encode_meta(const Database &db);
std::string encode_profile(const Database &db);
std::string encode_cct(const Database &db);

// trace.db: one line per profile that has one, streamed to temporary files
// in `dir` as samples come, then written by finish(). A sample means "from
// this timestamp on, the line is in this context": consecutive samples in
// the same context are merged, and a sample at the timestamp of the one
// before it replaces it, so that each line strictly increases.
class TraceLines {
 public:
  // The temporary files go to dir, named prefix + line number.
  explicit TraceLines(const std::string &dir, const std::string &prefix = ".trace-line-") : dir_(dir), prefix_(prefix) {}
  // A sample's context when the line's own is not known yet (an NPU
  // engine's, numbered once the whole trace is read): set_line() gives it.
  static constexpr uint32_t kLater = kNone;
  // A new line for profile prof (profIdx, 1-based: 0 is the summary); its index.
  uint32_t add_line(uint32_t prof);
  // Line `line` is profile prof's, and its kLater samples are in context
  // ctx. Before finish().
  void set_line(uint32_t line, uint32_t prof, uint32_t ctx);
  // Takes other's lines (their samples so far and their files), appended
  // after this one's; returns the index of the first. other is left empty.
  uint32_t adopt(TraceLines &other);
  ~TraceLines();
  TraceLines(const TraceLines &) = delete;
  TraceLines &operator=(const TraceLines &) = delete;
  // Timestamps of one line must not decrease (Error(INTERNAL) otherwise).
  void sample(uint32_t line, uint64_t timestamp, uint32_t ctx);
  // Writes trace.db to path, its lines in profile order; returns its size.
  // Removes the temporary files.
  uint64_t finish(const std::string &path);
  uint64_t samples() const { return samples_; }

 private:
  struct Line {
    uint32_t prof = 0;
    uint32_t later = kLater;  // the context of its kLater samples (set_line)
    std::FILE *f = nullptr;
    std::string path;
    uint64_t count = 0;  // written to f
    bool pending = false;
    uint64_t ts = 0;
    uint32_t ctx = 0;
    std::string buf;
  };
  void put(Line &l);
  std::string dir_, prefix_;
  std::vector<Line> lines_;
  uint64_t samples_ = 0;
};

}  // namespace uscope::exporter::hpctk
