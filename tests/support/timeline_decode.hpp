// Readers of the timeline exporters' output (tests of src/export/perfetto.cpp
// and chrome_json.cpp): a protobuf decoder written from the protobuf
// encoding documentation and Perfetto's protos (not from the encoder),
// Chrome JSON through simdjson, `protoc --decode_raw` as the outside check,
// and run_export over the C ABI.
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "support/test_util.hpp"
#include "uscope/export.h"

namespace uscope::test::timeline {

using uscope::test::read_all;

// ── an independent protobuf decoder ──

struct Field {
  uint32_t num = 0, wt = 0;
  uint64_t v = 0;           // varint / fixed64
  std::string_view bytes;   // length-delimited
};

inline bool varint(std::string_view &s, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (s.empty()) return false;
    const uint8_t b = static_cast<uint8_t>(s[0]);
    s.remove_prefix(1);
    v |= uint64_t{b & 0x7Fu} << shift;
    if (!(b & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

// Every field of a message; false when it is not well-formed.
inline bool fields(std::string_view s, std::vector<Field> *out) {
  out->clear();
  while (!s.empty()) {
    uint64_t tag;
    if (!varint(s, &tag)) return false;
    Field f;
    f.num = static_cast<uint32_t>(tag >> 3);
    f.wt = static_cast<uint32_t>(tag & 7);
    if (f.num == 0) return false;
    switch (f.wt) {
      case 0:
        if (!varint(s, &f.v)) return false;
        break;
      case 1:
        if (s.size() < 8) return false;
        for (int i = 7; i >= 0; --i) f.v = (f.v << 8) | static_cast<uint8_t>(s[static_cast<size_t>(i)]);
        s.remove_prefix(8);
        break;
      case 2: {
        uint64_t n;
        if (!varint(s, &n) || n > s.size()) return false;
        f.bytes = s.substr(0, n);
        s.remove_prefix(n);
        break;
      }
      default: return false;
    }
    out->push_back(f);
  }
  return true;
}

// What a timeline holds, by track name (a lane's " #k" suffix removed).
struct Timeline {
  uint64_t packets = 0, descriptors = 0, events = 0, sequences = 0;
  std::map<std::string, uint64_t> slices;            // thread track -> slices
  std::map<std::string, uint64_t> instants;
  std::map<std::string, std::vector<std::pair<uint64_t, int64_t>>> counters;  // track -> (ts, value)
  std::map<std::string, uint64_t> slice_names;       // slice name -> count
  std::vector<std::string> processes;
  uint64_t slices_with_pc = 0;
  uint64_t interned_names = 0, inline_names = 0;  // Perfetto: event names defined; events named inline
  std::multiset<uint64_t> flow_out, flow_in;
  std::vector<uint64_t> slice_ts;                    // begin and end timestamps, in file order
  uint64_t min_ts = UINT64_MAX, max_ts = 0;
  void ts(uint64_t t) {
    slice_ts.push_back(t);
    min_ts = std::min(min_ts, t);
    max_ts = std::max(max_ts, t);
  }
};

inline std::string resource(const std::string &track) {
  const size_t k = track.find(" #");
  return k == std::string::npos ? track : track.substr(0, k);
}

// Decodes a Perfetto trace by the field numbers of Perfetto's protos:
// Trace.packet 1; TracePacket timestamp 8, trusted_packet_sequence_id 10,
// track_event 11, interned_data 12, sequence_flags 13, track_descriptor 60,
// first_packet_on_sequence 87; TrackDescriptor uuid 1, name 2, process 3
// (process_name 6), thread 4 (thread_name 5), parent_uuid 5, counter 8;
// TrackEvent type 9, name_iid 10, track_uuid 11, name 23, counter_value
// 30, flow_ids 47, terminating_flow_ids 48; InternedData event_names 2
// (EventName iid 1, name 2).
inline Timeline decode_perfetto(const std::string &path) {
  Timeline t;
  const std::string data = read_all(path);
  std::vector<Field> top, pkt, sub, sub2;
  EXPECT_TRUE(fields(data, &top)) << "not a protobuf message";
  struct Trk {
    std::string name;
    bool counter = false;
    int depth = 0;
    uint64_t last_ts = 0;
  };
  std::map<uint64_t, Trk> tracks;
  // Interned names are a sequence's own (trusted_packet_sequence_id): the
  // export writes the cpu instructions on one and the rest on another.
  struct Seq {
    bool seen = false;
    std::map<uint64_t, std::string> names, arg_names;
  };
  std::map<uint64_t, Seq> seqs;
  struct Ev {
    uint64_t ts, uuid, type;
    size_t order;
  };
  std::vector<Ev> slice_evs;
  for (const Field &p : top) {
    EXPECT_EQ(p.num, 1u);
    EXPECT_EQ(p.wt, 2u);
    ++t.packets;
    if (!fields(p.bytes, &pkt)) {
      ADD_FAILURE() << "packet " << t.packets << " does not decode";
      continue;
    }
    uint64_t ts = 0, seq = 0, flags = 0;
    bool has_ts = false, first_flag = false;
    std::string_view te, td, id;
    for (const Field &f : pkt) {
      if (f.num == 8) { ts = f.v; has_ts = true; }
      if (f.num == 10) seq = f.v;
      if (f.num == 13) flags = f.v;
      if (f.num == 87) first_flag = f.v != 0;
      if (f.num == 11) te = f.bytes;
      if (f.num == 60) td = f.bytes;
      if (f.num == 12) id = f.bytes;
    }
    EXPECT_NE(seq, 0u);
    Seq &sq = seqs[seq];
    std::map<uint64_t, std::string> &names = sq.names, &arg_names = sq.arg_names;
    if (!sq.seen) {
      EXPECT_TRUE(flags & 1) << "the first packet of sequence " << seq << " clears the incremental state";
      EXPECT_TRUE(first_flag);
      sq.seen = true;
    } else {
      EXPECT_FALSE(first_flag) << "sequence " << seq << " has a second first packet";
    }
    if (!id.empty()) {
      EXPECT_TRUE(fields(id, &sub));
      for (const Field &f : sub) {
        if (f.num != 2 && f.num != 3) continue;  // event_names, debug_annotation_names
        EXPECT_TRUE(fields(f.bytes, &sub2));
        uint64_t iid = 0;
        std::string name;
        for (const Field &g : sub2) {
          if (g.num == 1) iid = g.v;
          if (g.num == 2) name = std::string(g.bytes);
        }
        EXPECT_NE(iid, 0u);
        auto &table = f.num == 2 ? names : arg_names;
        EXPECT_EQ(table.count(iid), 0u) << "iid " << iid << " defined twice";
        table[iid] = name;
        if (f.num == 2) ++t.interned_names;
      }
    }
    if (!td.empty()) {
      ++t.descriptors;
      EXPECT_TRUE(fields(td, &sub));
      uint64_t uuid = 0, parent = 0;
      Trk k;
      bool process = false;
      for (const Field &f : sub) {
        if (f.num == 1) uuid = f.v;
        if (f.num == 2) k.name = std::string(f.bytes);
        if (f.num == 5) parent = f.v;
        if (f.num == 8) k.counter = true;
        if (f.num == 3 || f.num == 4) {
          EXPECT_TRUE(fields(f.bytes, &sub2));
          for (const Field &g : sub2)
            if ((f.num == 3 && g.num == 6) || (f.num == 4 && g.num == 5)) k.name = std::string(g.bytes);
          process = f.num == 3;
        }
      }
      EXPECT_NE(uuid, 0u);
      EXPECT_EQ(tracks.count(uuid), 0u) << "track " << uuid << " described twice";
      if (!process) {
        EXPECT_TRUE(tracks.count(parent)) << "track " << k.name << ": parent not described before it";
      }
      if (process) t.processes.push_back(k.name);
      tracks[uuid] = k;
    }
    if (!te.empty()) {
      ++t.events;
      EXPECT_TRUE(has_ts);
      EXPECT_TRUE(fields(te, &sub));
      // An event naming an interned string depends on the sequence's state.
      bool interned = false;
      for (const Field &f : sub) interned |= f.num == 10 || f.num == 4;
      if (interned) {
        EXPECT_TRUE(flags & 2) << "an event using interned names needs the incremental state";
      }
      uint64_t type = 0, uuid = 0, iid = 0;
      int64_t value = 0;
      std::string name;
      for (const Field &f : sub) {
        if (f.num == 9) type = f.v;
        if (f.num == 11) uuid = f.v;
        if (f.num == 10) iid = f.v;
        if (f.num == 23) name = std::string(f.bytes), ++t.inline_names;
        if (f.num == 30) value = static_cast<int64_t>(f.v);
        if (f.num == 47) { EXPECT_EQ(f.wt, 1u); t.flow_out.insert(f.v); }
        if (f.num == 48) { EXPECT_EQ(f.wt, 1u); t.flow_in.insert(f.v); }
        if (f.num == 4) {  // DebugAnnotation: name_iid 1, uint_value 3, pointer_value 7
          EXPECT_TRUE(fields(f.bytes, &sub2));
          std::string key;
          for (const Field &g : sub2) {
            if (g.num == 1) {
              EXPECT_TRUE(arg_names.count(g.v)) << "debug annotation name " << g.v << " used before it is interned";
              key = arg_names[g.v];
            }
            if (g.num == 7 && key == "pc") ++t.slices_with_pc;
          }
        }
      }
      if (iid) {
        EXPECT_TRUE(names.count(iid)) << "name_iid " << iid << " used before it is interned";
        name = names[iid];
      }
      auto it = tracks.find(uuid);
      if (it == tracks.end()) {
        ADD_FAILURE() << "event on an undescribed track " << uuid;
        continue;
      }
      const std::string r = resource(it->second.name);
      switch (type) {
        case 1:
          ++t.slices[r];
          ++t.slice_names[name];
          t.ts(ts);
          slice_evs.push_back({ts, uuid, 1, slice_evs.size()});
          break;
        case 2:
          t.ts(ts);
          slice_evs.push_back({ts, uuid, 2, slice_evs.size()});
          break;
        case 3: ++t.instants[r]; break;
        case 4:
          EXPECT_TRUE(it->second.counter);
          t.counters[it->second.name].push_back({ts, value});
          break;
        default: ADD_FAILURE() << "event type " << type;
      }
    }
  }
  t.sequences = seqs.size();
  // As a trace processor sorts them (by time, stably): on each track every
  // END closes a BEGIN, and a lane's slices never overlap.
  std::stable_sort(slice_evs.begin(), slice_evs.end(), [](const Ev &a, const Ev &b) { return a.ts < b.ts; });
  for (const Ev &e : slice_evs) {
    Trk &k = tracks[e.uuid];
    k.depth += e.type == 1 ? 1 : -1;
    EXPECT_GE(k.depth, 0) << "END without BEGIN on " << k.name << " at " << e.ts;
    EXPECT_LE(k.depth, 1) << "overlapping slices on " << k.name << " at " << e.ts;
  }
  for (const auto &kv : tracks) EXPECT_EQ(kv.second.depth, 0) << "unclosed slice on " << kv.second.name;
  return t;
}

// The same from Chrome JSON, parsed by simdjson; ts in µs back to ns.
inline Timeline decode_chrome(const std::string &path) {
  Timeline t;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const auto err = parser.load(path).get(doc);
  EXPECT_FALSE(err) << path << " is not JSON: " << simdjson::error_message(err);
  if (err) return t;
  EXPECT_EQ(std::string_view(doc["displayTimeUnit"]), "ns");
  std::map<std::pair<uint64_t, uint64_t>, std::string> threads;
  std::vector<simdjson::dom::element> later;
  auto ns = [](simdjson::dom::element e) {
    double d = 0;
    EXPECT_FALSE(e.get(d));
    return static_cast<uint64_t>(d * 1000 + 0.5);
  };
  for (simdjson::dom::element e : simdjson::dom::array(doc["traceEvents"])) {
    ++t.events;
    const std::string_view ph = e["ph"];
    if (ph == "M") {
      const std::string_view what = e["name"];
      const std::string name = std::string(std::string_view(e["args"]["name"]));
      if (what == "process_name") t.processes.push_back(name);
      else threads[{uint64_t(e["pid"]), uint64_t(e["tid"])}] = name;
    } else {
      later.push_back(e);
    }
  }
  // Per track, slices (ph X) must nest: on a lane they never overlap.
  std::map<std::pair<uint64_t, uint64_t>, std::vector<std::pair<uint64_t, uint64_t>>> spans;
  for (simdjson::dom::element e : later) {
    const std::string_view ph = e["ph"];
    const std::pair<uint64_t, uint64_t> key{uint64_t(e["pid"]), uint64_t(e["tid"])};
    const uint64_t ts = ns(e["ts"]);
    if (ph == "C") {
      t.counters[std::string(std::string_view(e["name"]))].push_back({ts, int64_t(e["args"]["value"])});
      continue;
    }
    auto it = threads.find(key);
    if (it == threads.end()) {
      ADD_FAILURE() << "event on a thread with no thread_name";
      continue;
    }
    const std::string r = resource(it->second);
    if (ph == "X") {
      const uint64_t dur = ns(e["dur"]);
      ++t.slices[r];
      ++t.slice_names[std::string(std::string_view(e["name"]))];
      std::string_view pc;
      if (!e["args"]["pc"].get(pc) && pc.rfind("0x8", 0) == 0) ++t.slices_with_pc;
      t.ts(ts);
      t.ts(ts + dur);
      spans[key].push_back({ts, ts + dur});
    } else if (ph == "i") {
      ++t.instants[r];
    } else if (ph == "s") {
      t.flow_out.insert(uint64_t(e["id"]));
    } else if (ph == "f") {
      EXPECT_EQ(std::string_view(e["bp"]), "e");
      t.flow_in.insert(uint64_t(e["id"]));
    } else {
      ADD_FAILURE() << "unexpected ph " << ph;
    }
  }
  for (auto &kv : spans) {
    std::sort(kv.second.begin(), kv.second.end());
    for (size_t i = 1; i < kv.second.size(); ++i)
      EXPECT_LE(kv.second[i - 1].second, kv.second[i].first) << "overlapping slices on " << threads[kv.first];
  }
  return t;
}

// protoc --decode_raw reads the whole file: its packets (top-level field 1),
// descriptors (TracePacket field 60) and events (field 11) are counted.
inline void check_protoc(const std::string &path, const Timeline &t) {
  const std::string out = path + ".raw.txt";
  const std::string cmd = "protoc --decode_raw < '" + path + "' > '" + out + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "protoc --decode_raw failed (is protobuf-compiler installed?): "
                                         << read_all(out).substr(0, 500);
  const std::string text = read_all(out);
  uint64_t packets = 0, descriptors = 0, events = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    const std::string_view line(text.data() + at, nl - at);
    if (line == "1 {") ++packets;
    if (line == "  60 {") ++descriptors;
    if (line == "  11 {") ++events;
    at = nl + 1;
  }
  EXPECT_EQ(packets, t.packets);
  EXPECT_EQ(descriptors, t.descriptors);
  EXPECT_EQ(events, t.events);
}

inline uscope_export_stats_t run_export(const std::string &in, const std::string &out, uint32_t format, uint64_t a = 0,
                                 uint64_t b = UINT64_MAX, uint32_t unit = USCOPE_TIME_AUTO) {
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = format;
  o.range_start = a;
  o.range_end = b;
  o.time_unit = unit;
  uscope_export_stats_t st{};
  st.struct_size = sizeof st;
  EXPECT_EQ(uscope_export(&st, in.c_str(), out.c_str(), &o), USCOPE_OK) << uscope_last_error();
  return st;
}

}  // namespace uscope::test::timeline
