#include "analysis/noc_analysis.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <tuple>
#include <unordered_map>

#include "base/error.hpp"
#include "format/wire.hpp"
#include "protocol/noc_table.hpp"
#include "reader/trace_reader.hpp"

namespace uscope::analysis {

namespace noc = uscope::proto::noc;

namespace {

const char *name_of(const Schema &s, uint16_t off) {
  const char *p = s.str(off);
  return p ? p : "";
}

// The period of a scope's clock, inherited up the tree (1000 ps when none).
uint64_t period_of(const Schema &sc, uint16_t scope) {
  uint16_t at = scope;
  for (size_t d = 0; d <= sc.scopes.size() && at < sc.scopes.size(); ++d) {
    const ScopeDef &x = sc.scopes[at];
    if (x.clock_id != USCOPE_CLOCK_INHERIT) {
      for (const ClockDef &c : sc.clocks)
        if (c.clock_id == x.clock_id && c.period_ps) return c.period_ps;
      return 1000;
    }
    at = x.parent_id;
  }
  return 1000;
}

// A field of an event payload (§8.6.5: packed in order, no padding).
struct Slice {
  uint32_t off = 0;
  uint8_t size = 0;
  uint64_t get(const uint8_t *p, uint32_t n) const { return off + size <= n ? wire::get_field(p + off, size) : 0; }
};

bool slice_of(const EventDef &ev, const Schema &sc, const char *name, Slice *out) {
  uint32_t off = 0;
  for (const FieldDef &f : ev.fields) {
    const unsigned sz = wire::field_type_size(f.type);
    if (std::strcmp(name_of(sc, f.name), name) == 0) {
      if (sz == 0 || sz > 8) return false;
      *out = {off, static_cast<uint8_t>(sz)};
      return true;
    }
    off += sz;
  }
  return false;
}

enum Kind : uint8_t { kOther, kRetry, kTimeout, kCredit, kHandoff };

struct EvMap {
  Kind kind = kOther;
  uint32_t noc = 0;   // index of the noc scope (not for handoffs)
  uint16_t scope = 0; // the event's own scope: the noc scope or one below it (a router, §2.6)
  Slice a, b, c, d;   // retry: txn, reason; timeout: txn; credit: port, direction, credits; handoff: 4 fields
};

// An end-to-end transaction as it goes: its first hop's issue and its hops.
struct Chain {
  uint64_t birth_ps = 0;
  uint32_t hops = 1;
  bool known = true;
  bool continued = false;  // a handoff took it on: this hop does not end it
};

struct Live {
  bool live = false, known = false;
  uint64_t birth_ps = 0;
  uint64_t src = 0, dst = 0;
  Chain chain;
};

struct Done {  // a slot's last completed hop, which a later handoff may still continue
  bool valid = false;
  uint64_t t = 0;
  Chain chain;
};

struct Pending {  // a handoff to a slot whose hop is not issued yet
  bool valid = false;
  Chain chain;
};

struct Catalog {
  uint16_t scope_id = 0, storage = 0, src_field = 0, dst_field = 0;
  uint64_t period = 1000;
  std::vector<Live> live;
  std::vector<Done> done;
  std::vector<Pending> pending;
};

// The live slots of every catalog in states, as (catalog << 16 | slot).
std::vector<uint64_t> live_keys(const std::vector<Catalog> &cats, const std::vector<StorageState> &st) {
  std::vector<uint64_t> keys;
  for (size_t n = 0; n < cats.size(); ++n) {
    const StorageState &s = st[cats[n].storage];
    for (uint32_t slot = 0; slot < s.layout().num_slots; ++slot)
      if (s.valid(static_cast<uint16_t>(slot))) keys.push_back(uint64_t{n} << 16 | slot);
  }
  return keys;
}

class Analysis {
 public:
  Analysis(TraceReader &r, const NocOptions &o) : r_(r), o_(o) {}
  NocReport run();
  void resolve_schema();

 private:
  std::vector<uint64_t> start_keys(size_t seg);
  std::vector<uint64_t> births_in(size_t seg);
  void replay_from(size_t first, size_t last);
  void snapshot(const std::vector<StorageState> &st);
  void op(uint64_t t, const DeltaOp &o);
  void event(uint64_t t, uint16_t type, const uint8_t *p, uint32_t n);
  void complete(uint32_t n, uint16_t slot, uint64_t t);
  void finalize(const Done &d);
  NocPairRow &pair(uint32_t n, uint64_t src, uint64_t dst);
  bool in_range(uint64_t t) const { return t >= t0_ && t <= t1_; }

  TraceReader &r_;
  const NocOptions &o_;
  NocReport rep_;
  std::vector<Catalog> cats_;
  std::vector<int32_t> cat_of_storage_, cat_of_scope_;
  std::vector<EvMap> evs_;
  // Pair rows in order of first sight, found by (scope, src, dst); sorted at the end.
  struct PairKey {
    uint32_t n;
    uint64_t src, dst;
    bool operator==(const PairKey &o) const { return n == o.n && src == o.src && dst == o.dst; }
  };
  struct PairHash {
    size_t operator()(const PairKey &k) const {
      return std::hash<uint64_t>()((k.src * 0x9E3779B97F4A7C15ull) ^ (k.dst * 0xC2B2AE3D27D4EB4Full) ^ k.n);
    }
  };
  std::unordered_map<PairKey, uint32_t, PairHash> pair_index_;
  std::vector<NocPairRow> pairs_;
  std::map<std::pair<uint16_t, uint64_t>, NocPortRow> ports_;  // by (event scope, port)
  uint64_t t0_ = 0, t1_ = 0;
};

void Analysis::resolve_schema() {
  const Schema &sc = r_.schema();
  cat_of_scope_.assign(sc.scopes.size(), -1);
  cat_of_storage_.assign(sc.storages.size(), -1);
  const char *txn_id = noc::kTxnFields[USCOPE_NOC_FIELD_TXN_ID].name;
  const char *src = noc::kTxnFields[USCOPE_NOC_FIELD_SRC_PORT].name;
  const char *dst = noc::kTxnFields[USCOPE_NOC_FIELD_DST_PORT].name;
  for (uint16_t i = 0; i < sc.scopes.size(); ++i) {
    const ScopeDef &s = sc.scopes[i];
    if (s.protocol == wire::kNoString || std::strcmp(name_of(sc, s.protocol), noc::kTable.name) != 0) continue;
    Catalog c;
    c.scope_id = i;
    c.period = period_of(sc, i);
    bool found = false;
    for (uint16_t k = 0; k < sc.storages.size() && !found; ++k) {
      const StorageDef &sd = sc.storages[k];
      if (sd.scope_id != i || std::strcmp(name_of(sc, sd.name), noc::kTransactions.name) != 0) continue;
      int have = 0;
      for (uint16_t f = 0; f < sd.fields.size(); ++f) {
        const char *fn = name_of(sc, sd.fields[f].name);
        if (std::strcmp(fn, txn_id) == 0) have |= 1;
        if (std::strcmp(fn, src) == 0) c.src_field = f, have |= 2;
        if (std::strcmp(fn, dst) == 0) c.dst_field = f, have |= 4;
      }
      if (have != 7 || !(sd.flags & USCOPE_SF_SPARSE))
        fail(USCOPE_ERR_SCHEMA,
             "noc scope \"%s\": its %s storage is not the sparse catalog of noc §3 (%s, %s and %s fields)",
             name_of(sc, s.name), noc::kTransactions.name, txn_id, src, dst);
      c.storage = k;
      found = true;
    }
    if (!found)
      fail(USCOPE_ERR_SCHEMA, "noc scope \"%s\" has no %s storage (the transaction catalog of noc §3)",
           name_of(sc, s.name), noc::kTransactions.name);
    const uint16_t slots = sc.storages[c.storage].num_slots;
    c.live.resize(slots);
    c.done.resize(slots);
    c.pending.resize(slots);
    cat_of_scope_[i] = static_cast<int32_t>(cats_.size());
    cat_of_storage_[c.storage] = static_cast<int32_t>(cats_.size());
    NocScopeRow row;
    row.name = name_of(sc, s.name);
    row.scope_id = i;
    row.period_ps = c.period;
    rep_.scopes.push_back(std::move(row));
    cats_.push_back(std::move(c));
  }
  if (cats_.empty()) fail(USCOPE_ERR_NOT_FOUND, "this trace has no %s protocol scope", noc::kTable.name);

  // The events the analysis reads, by the table's names and fields.
  using proto::table::index_of;
  constexpr uint16_t kRetryEv = index_of(noc::kTable.events, "retry");
  constexpr uint16_t kTimeoutEv = index_of(noc::kTable.events, "timeout");
  constexpr uint16_t kCreditEv = index_of(noc::kTable.events, "link_credit");
  const proto::table::Event &retry = noc::kEvents[kRetryEv], &timeout = noc::kEvents[kTimeoutEv],
                            &credit = noc::kEvents[kCreditEv];
  evs_.assign(sc.events.size(), EvMap{});
  for (uint16_t i = 0; i < sc.events.size(); ++i) {
    const EventDef &ev = sc.events[i];
    const char *name = name_of(sc, ev.name);
    EvMap m;
    if (std::strcmp(name, noc::kTxnHandoff.name) == 0) {
      const auto &f = noc::kTxnHandoffFields;
      if (slice_of(ev, sc, f[0].name, &m.a) && slice_of(ev, sc, f[1].name, &m.b) &&
          slice_of(ev, sc, f[2].name, &m.c) && slice_of(ev, sc, f[3].name, &m.d))
        m.kind = kHandoff;
      evs_[i] = m;
      continue;
    }
    // An event of a noc scope, or of a scope below one (a noc.router, §2.6,
    // whose transactions are its nearest noc ancestor's).
    int32_t owner = -1;
    for (uint16_t at = ev.scope_id, d = 0; owner < 0 && at < sc.scopes.size() && d <= sc.scopes.size(); ++d) {
      owner = cat_of_scope_[at];
      at = sc.scopes[at].parent_id;
    }
    if (owner < 0) continue;
    m.noc = static_cast<uint32_t>(owner);
    m.scope = ev.scope_id;
    if (std::strcmp(name, retry.name) == 0) {
      if (slice_of(ev, sc, retry.fields[0].name, &m.a) && slice_of(ev, sc, retry.fields[1].name, &m.b))
        m.kind = kRetry;
    } else if (std::strcmp(name, timeout.name) == 0) {
      if (slice_of(ev, sc, timeout.fields[0].name, &m.a)) m.kind = kTimeout;
    } else if (std::strcmp(name, credit.name) == 0) {
      if (slice_of(ev, sc, credit.fields[0].name, &m.a) && slice_of(ev, sc, credit.fields[1].name, &m.b) &&
          slice_of(ev, sc, credit.fields[2].name, &m.c))
        m.kind = kCredit;
    }
    evs_[i] = m;
  }
}


// The live slots at the start of segment seg: its start state, as it is
// when the first frame begins (replay() loads it before any item); the
// decoding stops there.
std::vector<uint64_t> Analysis::start_keys(size_t seg) {
  struct Stop {};
  std::vector<StorageState> st = r_.initial_state();
  struct First {
    const std::vector<Catalog> &cats;
    const std::vector<StorageState> &st;
    std::vector<uint64_t> keys;
    bool seen = false;
    void frame(uint64_t) {
      keys = live_keys(cats, st);
      seen = true;
      throw Stop{};
    }
    void op(uint64_t, const DeltaOp &) {}
    void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
  } v{cats_, st, {}, false};
  bool ok = true;
  try {
    ok = r_.replay(seg, st, v);
  } catch (const Stop &) {
  }
  ++rep_.segments_read;
  if (!v.seen) v.keys = ok ? live_keys(cats_, st) : std::vector<uint64_t>{};  // a segment without frames
  return v.keys;
}

// The slots of every catalog that have a birth (become valid) in segment
// seg, as sorted keys.
std::vector<uint64_t> Analysis::births_in(size_t seg) {
  std::vector<StorageState> st = r_.initial_state();
  struct Births {
    const Analysis &a;
    const std::vector<StorageState> &st;
    std::vector<std::vector<uint8_t>> valid;  // per catalog, from the start state
    std::vector<uint64_t> keys;
    void frame(uint64_t) {
      if (!valid.empty()) return;
      for (const Catalog &c : a.cats_) {
        const StorageState &s = st[c.storage];
        std::vector<uint8_t> v(c.live.size());
        for (size_t i = 0; i < v.size(); ++i) v[i] = s.valid(static_cast<uint16_t>(i));
        valid.push_back(std::move(v));
      }
    }
    void op(uint64_t, const DeltaOp &o) {
      if (o.storage_id >= a.cat_of_storage_.size() || a.cat_of_storage_[o.storage_id] < 0) return;
      const uint32_t n = static_cast<uint32_t>(a.cat_of_storage_[o.storage_id]);
      if (o.slot >= valid[n].size()) return;
      if (o.action == wire::DA_SLOT_CLEAR) {
        valid[n][o.slot] = 0;
      } else if (o.action == wire::DA_SLOT_SET || o.action == wire::DA_SLOT_ADD) {
        if (!valid[n][o.slot]) keys.push_back(uint64_t{n} << 16 | o.slot);
        valid[n][o.slot] = 1;
      }
    }
    void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
  } v{*this, st, {}, {}};
  r_.replay(seg, st, v);
  ++rep_.segments_read;
  std::sort(v.keys.begin(), v.keys.end());
  v.keys.erase(std::unique(v.keys.begin(), v.keys.end()), v.keys.end());
  return v.keys;
}

// Transactions live where the replay starts: issued before it, their issue unknown.
void Analysis::snapshot(const std::vector<StorageState> &st) {
  for (Catalog &c : cats_) {
    const StorageState &s = st[c.storage];
    for (uint32_t slot = 0; slot < c.live.size(); ++slot) {
      Live &l = c.live[slot];
      l = Live{};
      if (!s.valid(static_cast<uint16_t>(slot))) continue;
      l.live = true;
      l.src = s.get(static_cast<uint16_t>(slot), c.src_field);
      l.dst = s.get(static_cast<uint16_t>(slot), c.dst_field);
      l.chain.known = false;
    }
  }
}

NocPairRow &Analysis::pair(uint32_t n, uint64_t src, uint64_t dst) {
  auto [it, fresh] = pair_index_.try_emplace(PairKey{n, src, dst}, static_cast<uint32_t>(pairs_.size()));
  if (fresh) {
    NocPairRow row;
    row.scope = n;
    row.src_port = static_cast<uint32_t>(src);
    row.dst_port = static_cast<uint32_t>(dst);
    pairs_.push_back(std::move(row));
  }
  return pairs_[it->second];
}

void Analysis::finalize(const Done &d) {
  if (!d.valid || d.chain.continued || !in_range(d.t) || !d.chain.known) return;
  rep_.end_to_end.add((d.t - d.chain.birth_ps) / rep_.period_ps);
  if (d.chain.hops > 1) ++rep_.multi_hop;
}

void Analysis::complete(uint32_t n, uint16_t slot, uint64_t t) {
  Catalog &c = cats_[n];
  Live &l = c.live[slot];
  if (in_range(t)) {
    NocScopeRow &row = rep_.scopes[n];
    NocPairRow &pr = pair(n, l.src, l.dst);
    ++rep_.counts.completed, ++row.counts.completed, ++pr.counts.completed;
    if (l.known) {
      const uint64_t cycles = (t - l.birth_ps) / c.period;
      rep_.latency.add(cycles);
      row.latency.add(cycles);
      pr.latency.add(cycles);
    } else {
      ++rep_.counts.unknown_issue, ++row.counts.unknown_issue, ++pr.counts.unknown_issue;
    }
  }
  finalize(c.done[slot]);
  c.done[slot] = Done{true, t, l.chain};
  l = Live{};
}

void Analysis::op(uint64_t t, const DeltaOp &o) {
  if (o.storage_id >= cat_of_storage_.size() || cat_of_storage_[o.storage_id] < 0) return;
  const uint32_t n = static_cast<uint32_t>(cat_of_storage_[o.storage_id]);
  Catalog &c = cats_[n];
  if (o.slot >= c.live.size()) return;
  Live &l = c.live[o.slot];
  if (o.action == wire::DA_SLOT_CLEAR) {
    if (l.live) complete(n, o.slot, t);
    return;
  }
  if (o.action != wire::DA_SLOT_SET && o.action != wire::DA_SLOT_ADD) return;
  if (!l.live) {  // issue (§3.4): the slot becomes valid
    finalize(c.done[o.slot]);
    c.done[o.slot] = Done{};
    l = Live{};
    l.live = l.known = true;
    l.birth_ps = t;
    l.chain.birth_ps = t;
    if (c.pending[o.slot].valid) {  // a handoff named this slot before its issue
      l.chain = c.pending[o.slot].chain;
      c.pending[o.slot] = Pending{};
    }
  }
  if (o.action == wire::DA_SLOT_SET) {
    if (o.field == c.src_field) l.src = o.value;
    if (o.field == c.dst_field) l.dst = o.value;
  }
}

void Analysis::event(uint64_t t, uint16_t type, const uint8_t *p, uint32_t size) {
  if (type >= evs_.size()) return;
  const EvMap &m = evs_[type];
  switch (m.kind) {
    case kOther: return;
    case kHandoff: {
      if (in_range(t)) ++rep_.handoffs;
      const uint64_t ss = m.a.get(p, size), st = m.b.get(p, size), ds = m.c.get(p, size), dt = m.d.get(p, size);
      const int32_t sn = ss < cat_of_scope_.size() ? cat_of_scope_[ss] : -1;
      const int32_t dn = ds < cat_of_scope_.size() ? cat_of_scope_[ds] : -1;
      Chain from;
      from.known = false;
      if (sn >= 0 && st < cats_[sn].live.size()) {
        Catalog &c = cats_[sn];
        if (c.live[st].live) {
          c.live[st].chain.continued = true;
          from = c.live[st].chain;
        } else if (c.done[st].valid) {
          c.done[st].chain.continued = true;
          from = c.done[st].chain;
        }
      }
      Chain next = from;
      next.continued = false;
      next.hops = from.hops + 1;
      if (dn < 0 || dt >= cats_[dn].live.size()) return;
      Catalog &d = cats_[dn];
      if (d.live[dt].live) {
        d.live[dt].chain = next;
      } else {
        d.pending[dt] = Pending{true, next};
      }
      return;
    }
    case kRetry:
    case kTimeout: {
      if (!in_range(t)) return;
      Catalog &c = cats_[m.noc];
      const uint64_t txn = m.a.get(p, size);
      NocScopeRow &row = rep_.scopes[m.noc];
      NocPairRow *pr = txn < c.live.size() && c.live[txn].live ? &pair(m.noc, c.live[txn].src, c.live[txn].dst)
                                                                : nullptr;
      NocCounts *all[] = {&rep_.counts, &row.counts, pr ? &pr->counts : nullptr};
      if (m.kind == kTimeout) {
        for (NocCounts *x : all)
          if (x) ++x->timeouts;
        return;
      }
      const uint64_t reason = m.b.get(p, size);
      if (reason < std::size(rep_.retry_reasons)) ++rep_.retry_reasons[reason];
      for (NocCounts *x : all)
        if (x) {
          ++x->retries;
          if (reason == USCOPE_NOC_RETRY_NO_CREDITS) ++x->credit_stalls;
        }
      return;
    }
    case kCredit: {
      if (!in_range(t)) return;
      const uint64_t port = m.a.get(p, size);
      auto [it, fresh] = ports_.try_emplace({m.scope, port});
      NocPortRow &pr = it->second;
      if (fresh) {
        pr.scope = m.noc;
        pr.scope_id = m.scope;
        pr.where = name_of(r_.schema(), r_.schema().scopes[m.scope].name);
        pr.port = static_cast<uint32_t>(port);
      }
      const uint64_t credits = m.c.get(p, size);
      if (m.b.get(p, size) == USCOPE_NOC_CREDIT_GRANT) {
        ++pr.grants;
        pr.credits_granted += credits;
      } else {
        ++pr.consumes;
        pr.credits_consumed += credits;
      }
      return;
    }
  }
}

void Analysis::replay_from(size_t first, size_t last) {
  std::vector<StorageState> st = r_.initial_state();
  struct V {
    Analysis &a;
    const std::vector<StorageState> &st;
    bool need_snapshot = true;
    void frame(uint64_t) {
      if (need_snapshot) {  // the start state, before the first frame's items
        a.snapshot(st);
        need_snapshot = false;
      }
    }
    // replay(.., until = t1) visits no op after t1, but every event.
    void op(uint64_t t, const DeltaOp &o) { a.op(t, o); }
    void event(uint64_t t, uint16_t type, const uint8_t *p, uint32_t n) {
      if (t <= a.t1_) a.event(t, type, p, n);
    }
  } v{*this, st};
  for (size_t i = first; i <= last; ++i) {
    r_.replay(i, st, v, t1_);
    ++rep_.segments_read;
  }
}

NocReport Analysis::run() {
  resolve_schema();
  rep_.period_ps = cats_[0].period;
  const uint64_t P = rep_.period_ps;
  const auto &segs = r_.segments();
  uint64_t last_ps = r_.header().total_time_ps;
  if (!segs.empty()) last_ps = std::max(last_ps, segs.back().header.time_end_ps);
  rep_.max_cycle = last_ps / P;
  if (o_.start_cycle > o_.end_cycle)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "the range %llu:%llu starts after it ends",
         static_cast<unsigned long long>(o_.start_cycle), static_cast<unsigned long long>(o_.end_cycle));
  rep_.start_cycle = std::min(o_.start_cycle, rep_.max_cycle);
  rep_.end_cycle = std::min(o_.end_cycle, rep_.max_cycle);
  rep_.clamped = (o_.end_cycle > rep_.max_cycle && o_.end_cycle != UINT64_MAX) || o_.start_cycle > rep_.max_cycle;
  t0_ = rep_.start_cycle * P;
  t1_ = rep_.end_cycle >= UINT64_MAX / P ? UINT64_MAX : rep_.end_cycle * P + (P - 1);
  if (segs.empty()) return std::move(rep_);

  // The segment holding t0, then back until the transactions live there were issued in what is read.
  size_t k = 0;
  while (k + 1 < segs.size() && segs[k + 1].header.time_start_ps <= t0_) ++k;
  // Walking back, the first segment where a slot live at k's start has a
  // birth holds the birth of the transaction live there (a later birth would
  // have been found first; a clear after it would have left the slot empty).
  size_t j = k;
  if (k > 0) {
    std::vector<uint64_t> unresolved = start_keys(k);
    while (!unresolved.empty() && j > 0 && k - j < o_.max_lookback) {
      --j;
      const std::vector<uint64_t> born = births_in(j);
      std::vector<uint64_t> rest;
      std::set_difference(unresolved.begin(), unresolved.end(), born.begin(), born.end(), std::back_inserter(rest));
      unresolved.swap(rest);
    }
  }
  size_t last = k;
  while (last + 1 < segs.size() && segs[last + 1].header.time_start_ps <= t1_) ++last;
  replay_from(j, last);

  // Hops whose chain is still open end the chain; what is live is in flight.
  for (uint32_t n = 0; n < cats_.size(); ++n) {
    Catalog &c = cats_[n];
    for (size_t s = 0; s < c.live.size(); ++s) {
      finalize(c.done[s]);
      if (c.live[s].live) ++rep_.scopes[n].in_flight, ++rep_.in_flight;
    }
  }
  std::sort(pairs_.begin(), pairs_.end(), [](const NocPairRow &a, const NocPairRow &b) {
    return std::tie(a.scope, a.src_port, a.dst_port) < std::tie(b.scope, b.src_port, b.dst_port);
  });
  rep_.pairs = std::move(pairs_);
  for (auto &[key, row] : ports_) rep_.ports.push_back(row);
  return std::move(rep_);
}

}  // namespace

NocReport analyze_noc(TraceReader &r, const NocOptions &o) { return Analysis(r, o).run(); }

void require_noc(TraceReader &r) {
  const NocOptions o;
  Analysis(r, o).resolve_schema();  // reads the schema only
}

}  // namespace uscope::analysis
