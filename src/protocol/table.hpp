// The shape of a protocol table (cpu_table.hpp, noc_table.hpp,
// npu_table.hpp): the one place a protocol's vocabulary is written down —
// its enums, storages with their fields, events with their payload fields,
// standard counters and DUT property keys. The declarations (cpu.cpp, ...)
// build the schema by walking it; the DPI bridge, the JSONL converter and the
// CLI's summary read their names from it.
//
// Header-only and constexpr on purpose: the CLI and the DPI bridge link the
// shared library, whose C++ symbols are hidden, so each of them compiles the
// tables in. They hold only literals, so a copy costs a few hundred bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "uscope/uscope.h"

namespace uscope::proto::table {

template <class T>
struct Span {
  const T *data = nullptr;
  uint16_t size = 0;
  constexpr Span() = default;
  template <size_t N>
  constexpr Span(const T (&a)[N]) : data(a), size(static_cast<uint16_t>(N)) {}
  constexpr const T *begin() const { return data; }
  constexpr const T *end() const { return data + size; }
  constexpr const T &operator[](size_t i) const { return data[i]; }
};

constexpr uint8_t U8 = USCOPE_FT_U8, U16 = USCOPE_FT_U16, U32 = USCOPE_FT_U32, U64 = USCOPE_FT_U64,
                  STR = USCOPE_FT_STRING_REF, ENUM = USCOPE_FT_ENUM;

// Not an enum field.
constexpr uint8_t kNoEnum = 0xFF;

// How a field of the npu protocol appears in a JSON-Lines trace
// (npu-trace-jsonl.md §4); cpu and noc fields leave it kKey, unused.
enum Jsonl : uint8_t {
  kKey,       // a JSONL key of the same name, its kind from the field type
  kOwn,       // the protocol's own (the slot it updates, ctx): no JSONL key
  kBool,      // a u8 0/1 that JSONL writes true/false
  kStrArray,  // a string of ','-joined items that JSONL writes as an array
};

struct Field {
  const char *name;
  uint8_t type;                // USCOPE_FT_*
  uint8_t enum_ref = kNoEnum;  // ENUM: index into the protocol's enums
  Jsonl jsonl = kKey;
};

// Where an enum's values come from.
enum class Values : uint8_t {
  kFixed,      // the table's values
  kConfig,     // the config's list (required): `values` is empty
  kOrDefault,  // the config's list, or the table's values when it gives none
};

struct Enum {
  const char *name;
  Span<const char *> values;
  Values source = Values::kFixed;
};

struct Storage {
  const char *name;
  uint16_t flags;       // USCOPE_SF_*
  Span<Field> fields;   // the protocol's; a config may append its own
  const char *slots;    // the config field giving the slot count (for messages and docs)
};

struct Event {
  const char *name;
  Span<Field> fields;  // payload, in order
};

struct Property {
  const char *key;
  bool per_scope;  // written as "<scope name>/<key>" (noc, npu instances)
};

struct Protocol {
  const char *name;  // the scope's protocol string
  Span<Enum> enums;           // in declaration order
  Span<Storage> storages;     // in declaration order
  Span<const char *> counters;  // the standard counters, counter index 0..
  Span<Event> events;         // in declaration order
  Span<Property> properties;  // in the order they are set
};

// A counter (spec cpu §6, the same in noc and npu): a 1-slot dense storage
// of this one field, the shape the viewer and the trace summary (COMPAT 16)
// recognize.
inline constexpr Field kCounterField = {"count", U64};

// Compile-time look-ups, for code that names one entry (the summary's
// "flush"): a name the table does not have is a compile error where the
// result is used as a constant.
constexpr bool same(const char *a, const char *b) { return std::string_view(a) == std::string_view(b); }

template <class T>
constexpr uint16_t index_of(Span<T> list, const char *name) {
  for (uint16_t i = 0; i < list.size; ++i)
    if (same(list[i].name, name)) return i;
  // Not constexpr: a missing name fails compilation in a constant context.
  throw "not in the protocol table";
}
constexpr uint16_t index_of(Span<const char *> list, const char *name) {
  for (uint16_t i = 0; i < list.size; ++i)
    if (same(list[i], name)) return i;
  throw "not in the protocol table";
}

// The table's own pointer for a name it has (one name, one string).
template <class T>
constexpr const char *name_in(Span<T> list, const char *name) {
  return list[index_of(list, name)].name;
}
constexpr const char *name_in(Span<const char *> list, const char *name) { return list[index_of(list, name)]; }
// Field `field` of the storage or event `owner`.
template <class T>
constexpr const char *field_in(Span<T> list, const char *owner, const char *field) {
  return name_in(list[index_of(list, owner)].fields, field);
}

}  // namespace uscope::proto::table
