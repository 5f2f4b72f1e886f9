// Ids by name while a schema is being built from text (SV calls, JSON files),
// for the kinds the look-ups of schema_lookup.hpp do not cover: clocks,
// scopes, enums, summary fields. A name declared more than once keeps every
// id, so that a look-up by it is an error (AMBIGUOUS), as the look-ups of
// storages and events are, rather than the first one declared.
//
// Header-only: the DPI bridge uses it too (libuscope.so exports no C++).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace uscope {

struct NameIds {
  std::map<std::string, std::vector<int>> ids;  // distinct ids, in declaration order

  /** The same id again (an enum shared by two scopes): no change. */
  void add(const std::string &name, int id) {
    std::vector<int> &v = ids[name];
    if (std::find(v.begin(), v.end(), id) == v.end()) v.push_back(id);
  }
  bool has(const std::string &name) const { return ids.count(name) != 0; }
  /** The one id of name. Throws Error(NOT_FOUND), or Error(AMBIGUOUS) listing the ids; kind words the message. */
  int one(const char *kind, const std::string &name) const {
    auto it = ids.find(name);
    if (it == ids.end()) throw Error(USCOPE_ERR_NOT_FOUND, std::string("no ") + kind + " named \"" + name + "\"");
    const std::vector<int> &v = it->second;
    if (v.size() == 1) return v[0];
    std::string list;
    for (int id : v) list += (list.empty() ? "" : ", ") + std::string(kind) + " " + std::to_string(id);
    throw Error(USCOPE_ERR_AMBIGUOUS, std::to_string(v.size()) + " " + kind + "s are named \"" + name + "\": " +
                                          list + "; use the id");
  }
};

}  // namespace uscope
