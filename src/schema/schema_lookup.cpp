#include "schema/schema_lookup.hpp"

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"

namespace uscope {
namespace {

// Does `query` name the item called `name` in scope `scope_id`: its own name,
// or that name qualified by the names of enclosing scopes, nearest last,
// joined by '.' ("core0.rob", "top.core0.rob")? The walk up the tree is
// bounded, for a file whose parent links loop.
bool names_item(const Schema &s, std::string_view query, const char *name, uint16_t scope_id) {
  const std::string_view n(name);
  if (query.size() < n.size() || query.substr(query.size() - n.size()) != n) return false;
  std::string_view rest = query.substr(0, query.size() - n.size());
  for (size_t hops = 0; hops <= s.scopes.size(); ++hops) {
    if (rest.empty()) return true;
    if (rest.back() != '.' || scope_id >= s.scopes.size()) return false;
    rest.remove_suffix(1);
    const std::string_view sc(s.name(s.scopes[scope_id].name));
    if (rest.size() < sc.size() || rest.substr(rest.size() - sc.size()) != sc) return false;
    rest.remove_suffix(sc.size());
    scope_id = s.scopes[scope_id].parent_id;
  }
  return false;
}

// The one index in [0, n) that `matches`; NOT_FOUND (not_found: the message)
// when none, AMBIGUOUS when several, listing the first 16 with `describe`.
// A writer that kept names unique (ours: uscope_schema_new) never makes the
// second for a fully qualified name; a file of another writer may.
template <class Match, class Describe>
uint16_t find_unique(size_t n, Match &&matches, Describe &&describe, const char *kind, const char *name,
                     const std::string &not_found) {
  constexpr size_t kListed = 16;
  std::vector<size_t> hits;
  size_t count = 0;
  for (size_t i = 0; i < n; ++i)
    if (matches(i)) {
      if (hits.size() < kListed) hits.push_back(i);
      ++count;
    }
  if (count == 0) fail(USCOPE_ERR_NOT_FOUND, "%s", not_found.c_str());
  if (count > 1) {
    std::string list;
    for (size_t i : hits) list += (list.empty() ? "" : ", ") + describe(i);
    if (count > hits.size()) list += ", ...";
    fail(USCOPE_ERR_AMBIGUOUS, "%zu %s match \"%s\": %s; qualify the name or use the id", count, kind, name,
         list.c_str());
  }
  return static_cast<uint16_t>(hits[0]);
}

// "3 (scope 1 \"core0\")": a candidate of an ambiguous storage or event name.
std::string id_in_scope(const Schema &s, size_t id, uint16_t scope_id) {
  std::string d = std::to_string(id);
  if (scope_id < s.scopes.size())
    d += " (scope " + std::to_string(scope_id) + " \"" + s.name(s.scopes[scope_id].name) + "\")";
  else
    d += " (root level)";
  return d;
}

}  // namespace

uint16_t find_storage(const Schema &s, const char *name) {
  return find_unique(
      s.storages.size(),
      [&](size_t i) { return names_item(s, name, s.name(s.storages[i].name), s.storages[i].scope_id); },
      [&](size_t i) { return "storage " + id_in_scope(s, i, s.storages[i].scope_id); }, "storages", name,
      format_message("no storage named \"%s\"", name));
}

uint16_t find_event(const Schema &s, const char *name) {
  return find_unique(
      s.events.size(),
      [&](size_t i) { return names_item(s, name, s.name(s.events[i].name), s.events[i].scope_id); },
      [&](size_t i) { return "event type " + id_in_scope(s, i, s.events[i].scope_id); }, "event types", name,
      format_message("no event type named \"%s\"", name));
}

uint16_t find_field(const Schema &s, uint16_t id, const char *name, bool is_property) {
  if (id >= s.storages.size()) fail(USCOPE_ERR_UNKNOWN_STORAGE, "storage %u: the schema has %zu", id, s.storages.size());
  const auto &fields = is_property ? s.storages[id].props : s.storages[id].fields;
  const char *what = is_property ? "property" : "field";
  return find_unique(
      fields.size(), [&](size_t i) { return std::strcmp(s.name(fields[i].name), name) == 0; },
      [&](size_t i) { return std::string(what) + " " + std::to_string(i); },
      is_property ? "properties of the storage" : "fields of the storage", name,
      format_message("storage %u has no %s named \"%s\"", id, what, name));
}

}  // namespace uscope
