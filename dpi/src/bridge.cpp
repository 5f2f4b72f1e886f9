// The bridge's calls behind the exported entry points: thread-local errors,
// the bookkeeping of handles (live schemas, writers opened here, the name
// registry) and the writer calls that need a type conversion.
#include "bridge.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <set>
#include <type_traits>

#include "protocols.hpp"
#include "schema.hpp"
#include "uscope/uscope.h"
#include "uscope/uscope_dpi.h"

namespace uscope_dpi {
namespace {

// The bridge's error record (record_error): the message is libuscope's own last
// error (uscope_set_last_error), so that a bridge failure and a library failure
// read from one place; only the status is kept here, because SV calls that
// return a handle or a value have no status of their own to return, and the
// bridge has statuses of its own (USCOPE_DPI_ERR_*).
thread_local int t_status = USCOPE_OK;

void set_error(int status, const std::string &msg) noexcept { record_error(status, msg); }

struct WriterState {
  std::shared_ptr<const Names> names;  // null for a writer opened in C
  bool frame_open = false;             // a frame begun by uscope_sv_cycle
  uint64_t frame_time = 0;
  void *parent = nullptr;              // a producer's writer (uscope_sv_add_producer)
};

// Set-up state shared by every thread. Schemas and writers are used by one
// thread at a time, but a handle may be created on one thread and used on
// another, and the registry is read by SV code on the simulation thread.
struct Globals {
  std::mutex mu;
  std::set<Schema *> schemas;                                   // live bridge schemas
  std::map<void *, WriterState> writers;                         // opened by uscope_open*,
                                                                // or used with uscope_sv_cycle
  std::map<std::string, void *> registry;                       // uscope_dpi_register
};
Globals &globals() {
  static Globals *g = new Globals;  // never destroyed: usable from atexit and static dtors
  return *g;
}

// uscope_sv_cycle runs every cycle, so it must not take Globals::mu each time.
// Each thread keeps the state of the writer it used last; the cache is good
// while no entry of Globals::writers has been erased since it was filled
// (std::map nodes do not move), which g_writers_erased counts.
std::atomic<uint64_t> g_writers_erased{0};
struct CycleCache {
  void *writer = nullptr;
  WriterState *state = nullptr;
  uint64_t erased = 0;
};
thread_local CycleCache t_cycle;

// Run body; turn every exception into a status and the thread's message.
// Returns body's value, or on failure the status (int calls) or NULL
// (handle-returning calls).
template <class T, class F>
T guarded(T /*type tag*/, const char *what, F &&body) noexcept {
  int status = USCOPE_ERR_INTERNAL;
  try {
    return body();
  } catch (const uscope::Error &f) {  // Failure, or the core's field-list parser and JSON reader
    status = f.code();
    set_error(status, std::string(what) + ": " + f.what());
  } catch (const std::bad_alloc &) {
    status = USCOPE_ERR_NO_MEMORY;
    set_error(status, std::string(what) + ": out of memory");
  } catch (const std::exception &e) {
    set_error(status, std::string(what) + ": " + e.what());
  } catch (...) {
    set_error(status, std::string(what) + ": unknown exception");
  }
  if constexpr (std::is_pointer_v<T>) return nullptr;
  else return static_cast<T>(status);
}

Schema *as_schema(void *handle) {
  if (!handle) fail(USCOPE_DPI_ERR_BAD_HANDLE, "schema handle is null");
  Globals &g = globals();
  std::lock_guard<std::mutex> lock(g.mu);
  Schema *s = static_cast<Schema *>(handle);
  if (!g.schemas.count(s))
    fail(USCOPE_DPI_ERR_BAD_HANDLE, "the chandle is not a live schema of the bridge "
                                    "(uscope_sv_schema_create / uscope_sv_schema_from_json)");
  return s;
}

std::string str(const char *s, const char *what) {
  if (!s) fail(USCOPE_ERR_INVALID_ARGUMENT, std::string(what) + " is null");
  return s;
}

void *adopt(std::unique_ptr<Schema> s) {
  Globals &g = globals();
  std::lock_guard<std::mutex> lock(g.mu);
  g.schemas.insert(s.get());
  return s.release();
}

}  // namespace

// ── versions and errors ──

void record_error(int status, const std::string &msg) noexcept {
  t_status = status;
  uscope_set_last_error(msg.c_str());
}

const char *version() noexcept { return USCOPE_DPI_VERSION; }
const char *last_error() noexcept { return uscope_last_error(); }
int last_status() noexcept { return t_status; }

const char *status_str(int status) noexcept {
  switch (status) {
    case USCOPE_DPI_ERR_SYNTAX: return "a CSV field list or options string does not parse";
    case USCOPE_DPI_ERR_JSON: return "the JSON file cannot be read or is not valid JSON";
    case USCOPE_DPI_ERR_JSON_SCHEMA: return "the JSON file does not describe a valid schema";
    case USCOPE_DPI_ERR_BAD_HANDLE: return "the handle is null or of the wrong kind";
    default: return uscope_status_str(status);
  }
}

// ── registry ──

void register_handle(const char *name, void *handle) noexcept {
  guarded(0, "uscope_dpi_register", [&] {
    const std::string n = str(name, "name");
    Globals &g = globals();
    std::lock_guard<std::mutex> lock(g.mu);
    if (handle) g.registry[n] = handle;
    else g.registry.erase(n);
    return 0;
  });
}

void *lookup_handle(const char *name) noexcept {
  return guarded<void *>(nullptr, "uscope_handle", [&]() -> void * {
    if (!name) fail(USCOPE_ERR_INVALID_ARGUMENT, "name is null");
    Globals &g = globals();
    std::lock_guard<std::mutex> lock(g.mu);
    auto it = g.registry.find(name);
    if (it == g.registry.end())
      fail(USCOPE_ERR_NOT_FOUND, format("no handle registered as \"%s\"", name));
    return it->second;
  });
}

// ── schemas ──

void *schema_create() noexcept {
  return guarded<void *>(nullptr, "uscope_sv_schema_create",
                         [&] { return adopt(std::unique_ptr<Schema>(new Schema)); });
}

void *schema_from_json(const char *json_path) noexcept {
  return guarded<void *>(nullptr, "uscope_sv_schema_from_json",
                         [&] { return adopt(load_json_schema(str(json_path, "json_path"))); });
}

int schema_free(void *schema) noexcept {
  return guarded(USCOPE_ERR_INTERNAL, "uscope_sv_schema_free", [&] {
    if (!schema) return USCOPE_OK;
    Globals &g = globals();
    std::unique_lock<std::mutex> lock(g.mu);
    Schema *s = static_cast<Schema *>(schema);
    if (!g.schemas.erase(s)) fail(USCOPE_DPI_ERR_BAD_HANDLE, "not a live schema of the bridge");
    lock.unlock();
    delete s;
    return USCOPE_OK;
  });
}

int schema_clock(void *schema, const char *name, uint32_t period_ps) noexcept {
  return guarded(USCOPE_ERR_INTERNAL, "uscope_sv_schema_clock", [&] {
    return add_clock(*as_schema(schema), str(name, "name"), period_ps);
  });
}

int schema_scope(void *schema, const char *name, int parent, const char *protocol, int clock) noexcept {
  return guarded(USCOPE_ERR_INTERNAL, "uscope_sv_schema_scope", [&] {
    return add_scope(*as_schema(schema), str(name, "name"), parent, protocol ? protocol : "", clock);
  });
}

int schema_enum(void *schema, const char *name, const char *values_csv) noexcept {
  return guarded(USCOPE_ERR_INTERNAL, "uscope_sv_schema_enum", [&] {
    return add_enum(*as_schema(schema), str(name, "name"), split_csv(str(values_csv, "values_csv")));
  });
}

int schema_storage(void *schema, const char *name, int scope, uint32_t num_slots, uint32_t flags,
                   const char *fields, const char *properties) noexcept {
  return guarded(USCOPE_ERR_INTERNAL, "uscope_sv_schema_storage", [&] {
    Schema &s = *as_schema(schema);
    const std::string n = str(name, "name");
    const std::string ctx = "storage \"" + n + "\"";
    return add_storage(s, n, scope, num_slots, flags,
                       parse_fields(str(fields, "fields"), false, (ctx + " fields").c_str()),
                       parse_fields(properties ? properties : "", true, (ctx + " properties").c_str()));
  });
}

int schema_event(void *schema, const char *name, int scope, const char *fields) noexcept {
  return guarded(USCOPE_ERR_INTERNAL, "uscope_sv_schema_event", [&] {
    Schema &s = *as_schema(schema);
    const std::string n = str(name, "name");
    return add_event(s, n, scope, parse_fields(fields ? fields : "", false, ("event \"" + n + "\"").c_str()));
  });
}

int schema_summary(void *schema, const char *name, const char *type, int scope) noexcept {
  return guarded(USCOPE_ERR_INTERNAL, "uscope_sv_schema_summary", [&] {
    Schema &s = *as_schema(schema);
    FieldSpec f;
    const std::string t = str(type, "type");
    if (!parse_type(t, &f) || f.type == USCOPE_FT_ENUM)
      fail(USCOPE_DPI_ERR_SYNTAX, format("summary field type \"%s\" is not one of u8 u16 u32 u64 i8 "
                                         "i16 i32 i64 bool string", t.c_str()));
    return add_summary(s, str(name, "name"), f.type, scope);
  });
}

int schema_dut_property(void *schema, const char *key, const char *value) noexcept {
  return guarded(USCOPE_ERR_INTERNAL, "uscope_sv_schema_dut_property", [&] {
    add_dut_property(*as_schema(schema), str(key, "key"), str(value, "value"));
    return USCOPE_OK;
  });
}

// Where uscope_sv_find looks: the bridge's names, and the libuscope handle
// that answers for storages and events (exactly one of schema, writer).
struct FindTarget {
  const Names &names;
  const uscope_schema_t *schema;
  const uscope_writer_t *writer;
};

// A storage or an event type by name, through libuscope's own look-up (the
// one uscope_reader_find_* use): the plain name or the name qualified by its
// scopes ("core0.rob"); a plain name declared in several scopes is
// AMBIGUOUS, its message listing the candidates.
static int find_lib(const FindTarget &t, bool event, const std::string &name) {
  if (event) {
    auto alias = t.names.event_aliases.find(name);
    if (alias != t.names.event_aliases.end()) return alias->second;
  }
  uint16_t id = 0;
  const uscope_status_t st =
      t.schema ? (event ? uscope_schema_find_event : uscope_schema_find_storage)(t.schema, &id, name.c_str())
               : (event ? uscope_writer_find_event : uscope_writer_find_storage)(t.writer, &id, name.c_str());
  if (st != USCOPE_OK) fail(st, uscope_last_error());
  return id;
}

static int find_in(const FindTarget &t, const std::string &kind, const std::string &name) {
  const Names &n = t.names;
  // "owner.member": the owner found as its kind is (so "core1.rob.stage" is
  // field "stage" of storage "core1.rob"), the member by its index.
  auto member = [&](auto &&owner_id, const std::map<int, std::vector<std::string>> &members) {
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos)
      fail(USCOPE_ERR_INVALID_ARGUMENT, format("%s \"%s\": expected owner.member", kind.c_str(), name.c_str()));
    const int owner = owner_id(name.substr(0, dot));
    const std::string m = name.substr(dot + 1);
    auto list = members.find(owner);
    if (list != members.end()) {
      auto it = std::find(list->second.begin(), list->second.end(), m);
      if (it != list->second.end()) return static_cast<int>(it - list->second.begin());
    }
    fail(USCOPE_ERR_NOT_FOUND, format("no %s named \"%s\"", kind.c_str(), name.c_str()));
  };
  auto storage = [&](const std::string &s) { return find_lib(t, false, s); };
  auto event = [&](const std::string &e) { return find_lib(t, true, e); };
  auto enumeration = [&](const std::string &e) { return n.enums.one("enum", e); };
  if (kind == "clock") return n.clocks.one("clock", name);
  if (kind == "scope") return n.scopes.one("scope", name);
  if (kind == "enum") return enumeration(name);
  if (kind == "storage") return storage(name);
  if (kind == "event") return event(name);
  if (kind == "summary") return n.summaries.one("summary field", name);
  if (kind == "field") return member(storage, n.storage_fields);
  if (kind == "property") return member(storage, n.storage_props);
  if (kind == "event_field") return member(event, n.event_fields);
  if (kind == "enum_value") return member(enumeration, n.enum_values);
  fail(USCOPE_ERR_INVALID_ARGUMENT,
       format("unknown kind \"%s\" (clock, scope, enum, storage, event, summary, field, property, "
              "event_field, enum_value)", kind.c_str()));
}

int find(void *handle, const char *kind, const char *name) noexcept {
  return guarded(USCOPE_ERR_INTERNAL, "uscope_sv_find", [&] {
    const std::string k = str(kind, "kind"), n = str(name, "name");
    if (!handle) fail(USCOPE_DPI_ERR_BAD_HANDLE, "handle is null");
    std::shared_ptr<const Names> names;
    {
      Globals &g = globals();
      std::lock_guard<std::mutex> lock(g.mu);
      auto w = g.writers.find(handle);
      if (w != g.writers.end() && w->second.names) names = w->second.names;
      else if (!g.schemas.count(static_cast<Schema *>(handle)))
        fail(USCOPE_DPI_ERR_BAD_HANDLE, "the chandle is neither a bridge schema nor a writer opened by the bridge");
    }
    // A schema is used by one thread at a time (its owner's): read it
    // unlocked. A writer's schema and names do not change after open.
    if (names) return find_in({*names, nullptr, static_cast<const uscope_writer_t *>(handle)}, k, n);
    const Schema &s = *static_cast<Schema *>(handle);
    return find_in({s.names, s.raw, nullptr}, k, n);
  });
}

// ── writers ──

static void *open_with(const std::string &path, Schema &s, const uscope_writer_options_t &opts) {
  auto names = std::make_shared<const Names>(s.names);
  uscope_writer_t *w = nullptr;
  check(uscope_writer_open(&w, path.c_str(), s.raw, nullptr, 0, &opts), "\"" + path + "\"");
  Globals &g = globals();
  try {
    std::lock_guard<std::mutex> lock(g.mu);
    g.writers[w].names = std::move(names);
  } catch (...) {
    (void)uscope_writer_close(w);  // out of memory registering it: that error is the one to report
    throw;
  }
  return w;
}

void *open(const char *path, void *schema, const char *options) noexcept {
  return guarded<void *>(nullptr, options ? "uscope_open_opts" : "uscope_open", [&] {
    const std::string p = str(path, "path");
    Schema &s = *as_schema(schema);
    uscope_writer_options_t opts = s.opts;
    if (options) parse_options(&opts, options);
    return open_with(p, s, opts);
  });
}

void *open_json(const char *path, const char *json_path) noexcept {
  return guarded<void *>(nullptr, "uscope_open_json", [&] {
    const std::string p = str(path, "path");
    std::unique_ptr<Schema> s = load_json_schema(str(json_path, "schema_json_path"));
    return open_with(p, *s, s->opts);
  });
}

int close(void *writer) noexcept {
  return guarded(USCOPE_ERR_INTERNAL, "uscope_close", [&] {
    if (!writer) return USCOPE_OK;
    bool frame_open = false;
    {
      Globals &g = globals();
      std::lock_guard<std::mutex> lock(g.mu);
      if (g.schemas.count(static_cast<Schema *>(writer)))
        fail(USCOPE_DPI_ERR_BAD_HANDLE, "the chandle is a schema, not a writer");
      auto it = g.writers.find(writer);
      if (it != g.writers.end()) {
        frame_open = it->second.frame_open;
        g.writers.erase(it);
        g_writers_erased.fetch_add(1, std::memory_order_release);  // every CycleCache is stale
      }
      // A writer frees its producers: forget their handles and names too.
      std::set<void *> gone{writer};
      for (auto p = g.writers.begin(); p != g.writers.end();) {
        if (p->second.parent != writer) {
          ++p;
          continue;
        }
        gone.insert(p->first);
        p = g.writers.erase(p);
        g_writers_erased.fetch_add(1, std::memory_order_release);
      }
      for (auto r = g.registry.begin(); r != g.registry.end();)
        r = gone.count(r->second) ? g.registry.erase(r) : std::next(r);
    }
    uscope_writer_t *w = static_cast<uscope_writer_t *>(writer);
    // The last frame opened by uscope_sv_cycle is complete: keep it (close
    // would discard a frame left open). Its status, if any, is sticky and
    // comes back from close.
    if (frame_open) (void)uscope_end_cycle(w);
    const std::string sticky = uscope_writer_error(w);
    const uscope_status_t st = uscope_writer_close(w);
    if (st != USCOPE_OK) fail(st, sticky.empty() ? std::string(uscope_last_error()) : sticky);
    return USCOPE_OK;
  });
}

void *add_producer(void *writer) noexcept {
  return guarded<void *>(nullptr, "uscope_sv_add_producer", [&] {
    if (!writer) fail(USCOPE_DPI_ERR_BAD_HANDLE, "writer is null");
    Globals &g = globals();
    std::shared_ptr<const Names> names;
    {
      std::lock_guard<std::mutex> lock(g.mu);
      if (g.schemas.count(static_cast<Schema *>(writer)))
        fail(USCOPE_DPI_ERR_BAD_HANDLE, "the chandle is a schema, not a writer");
      auto it = g.writers.find(writer);
      if (it != g.writers.end()) names = it->second.names;
    }
    uscope_writer_t *p = nullptr;
    check(uscope_writer_add_producer(static_cast<uscope_writer_t *>(writer), &p), "uscope_sv_add_producer");
    // Known to uscope_sv_find (the writer's names) and to uscope_close.
    std::lock_guard<std::mutex> lock(g.mu);
    WriterState &st = g.writers[p];
    st.names = std::move(names);
    st.parent = writer;
    return static_cast<void *>(p);
  });
}

int cycle(void *writer, uint64_t time_ps) noexcept {
  return guarded(USCOPE_ERR_INTERNAL, "uscope_sv_cycle", [&] {
    if (!writer) fail(USCOPE_DPI_ERR_BAD_HANDLE, "writer is null");
    uscope_writer_t *w = static_cast<uscope_writer_t *>(writer);
    WriterState *st = t_cycle.state;
    if (t_cycle.writer != writer || t_cycle.erased != g_writers_erased.load(std::memory_order_acquire)) {
      // First call for this writer on this thread (or after a close): look it
      // up under the lock, once.
      Globals &g = globals();
      std::lock_guard<std::mutex> lock(g.mu);
      if (g.schemas.count(static_cast<Schema *>(writer)))
        fail(USCOPE_DPI_ERR_BAD_HANDLE, "the chandle is a schema, not a writer");
      st = &g.writers[writer];
      t_cycle = {writer, st, g_writers_erased.load(std::memory_order_relaxed)};
    }
    if (st->frame_open && st->frame_time == time_ps) return USCOPE_OK;
    if (st->frame_open) {
      st->frame_open = false;
      const uscope_status_t e = uscope_end_cycle(w);
      if (e != USCOPE_OK) return e;  // sticky: the writer's message says why
    }
    const uscope_status_t b = uscope_begin_cycle(w, time_ps);
    if (b != USCOPE_OK) return b;
    st->frame_open = true;
    st->frame_time = time_ps;
    return USCOPE_OK;
  });
}

int event_raw(void *writer, uint16_t event_type_id, const unsigned char *payload, uint32_t len) noexcept {
  uscope_writer_t *w = static_cast<uscope_writer_t *>(writer);
  if (__builtin_expect(len > USCOPE_DPI_PAYLOAD_BYTES, 0)) {
    // Never read past the SV array. With a NULL payload the writer records a
    // sticky PAYLOAD_SIZE (or "payload is NULL") misuse, as for any bad size.
    // The bridge's reason is recorded after that call, which sets the last
    // error too: it is the more precise of the two messages.
    const uscope_status_t st = uscope_event(w, event_type_id, nullptr, len);
    try {
      set_error(USCOPE_ERR_PAYLOAD_SIZE,
                format("uscope_event_raw: len %u is larger than the %d-byte payload array", len,
                       USCOPE_DPI_PAYLOAD_BYTES));
    } catch (...) {
    }
    return st;
  }
  return uscope_event(w, event_type_id, payload, len);
}

// ── protocols ──

void *cpu_declare(void *schema, const CpuArgs &args) noexcept {
  return guarded<void *>(nullptr, "uscope_sv_cpu_declare", [&] { return cpu_declare(*as_schema(schema), args); });
}
void *noc_declare(void *schema, const NocArgs &args) noexcept {
  return guarded<void *>(nullptr, "uscope_sv_noc_declare", [&] { return noc_declare(*as_schema(schema), args); });
}
void *npu_declare(void *schema, const NpuArgs &args) noexcept {
  return guarded<void *>(nullptr, "uscope_sv_npu_declare", [&] { return npu_declare(*as_schema(schema), args); });
}

}  // namespace uscope_dpi
