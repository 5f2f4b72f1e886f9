#include "analysis/noc_analysis.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
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
  uint64_t get(const uint8_t *p, uint32_t n) const {
    return size && off + size <= n ? wire::get_field(p + off, size) : 0;
  }
};

bool slice_of(const EventDef &ev, const Schema &sc, const char *name, Slice *out) {
  uint32_t off = 0;
  for (const FieldDef &f : ev.fields) {
    const unsigned sz = wire::field_type_size(f.type);
    if (std::strcmp(sc.name(f.name), name) == 0) {
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
  uint64_t handoff_in = 0;  // the handoff that led to this hop
};

// A hop as it goes; kept, once completed, as its slot's last hop, which a
// later handoff may still continue (until the slot's next issue).
struct Hop {
  bool live = false, known = false;
  uint64_t birth_ps = 0, done_ps = 0;
  uint64_t src = 0, dst = 0, opcode = 0, addr = 0;
  Chain chain;
  bool continued = false;  // a handoff took it on: this hop does not end its chain
  uint8_t n_out = 0;
  uint64_t out[kNocMaxHandoffsOut] = {};
};

struct Pending {  // a handoff to a slot whose hop is not issued yet
  bool valid = false;
  Chain chain;
};

constexpr uint16_t kNoField = 0xFFFF;

struct Catalog {
  uint16_t scope_id = 0, storage = 0, src_field = 0, dst_field = 0;
  uint16_t opcode_field = kNoField, addr_field = kNoField;
  uint64_t period = 1000;
  std::vector<Hop> live;
  std::vector<Hop> done;          // each slot's last completed hop, while has_done
  std::vector<uint8_t> has_done;
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

// The one decoder of the noc protocol: the catalogs' hops, the handoffs
// that chain them, retries, timeouts and link credits, told to a visitor.
class Decoder {
 public:
  Decoder(TraceReader &r, const NocOptions &o, NocVisitor &v) : r_(r), o_(o), v_(v) {}
  NocLayout run();
  void resolve_schema();

 private:
  std::vector<uint64_t> start_keys(size_t seg);
  std::vector<uint64_t> births_in(size_t seg);
  void replay_from(size_t first, size_t last);
  void snapshot(const std::vector<StorageState> &st);
  void op(uint64_t t, const DeltaOp &o);
  void event(uint64_t t, uint16_t type, const uint8_t *p, uint32_t n);
  void tell(uint32_t n, uint16_t slot, const Hop &h);
  void retire(uint32_t n, uint16_t slot);

  TraceReader &r_;
  const NocOptions &o_;
  NocVisitor &v_;
  NocLayout lay_;
  std::vector<Catalog> cats_;
  std::vector<int32_t> cat_of_storage_, cat_of_scope_;
  std::vector<EvMap> evs_;
  uint64_t handoffs_ = 0;
};

void Decoder::resolve_schema() {
  const Schema &sc = r_.schema();
  cat_of_scope_.assign(sc.scopes.size(), -1);
  cat_of_storage_.assign(sc.storages.size(), -1);
  const char *txn_id = noc::kTxnFields[USCOPE_NOC_FIELD_TXN_ID].name;
  const char *src = noc::kTxnFields[USCOPE_NOC_FIELD_SRC_PORT].name;
  const char *dst = noc::kTxnFields[USCOPE_NOC_FIELD_DST_PORT].name;
  const char *opcode = noc::kTxnFields[USCOPE_NOC_FIELD_OPCODE].name;
  const char *addr = noc::kTxnFields[USCOPE_NOC_FIELD_ADDR].name;
  for (uint16_t i = 0; i < sc.scopes.size(); ++i) {
    const ScopeDef &s = sc.scopes[i];
    if (s.protocol == wire::kNoString || std::strcmp(sc.name(s.protocol), noc::kTable.name) != 0) continue;
    Catalog c;
    c.scope_id = i;
    c.period = period_of(sc, i);
    NocScopeInfo info;
    bool found = false;
    for (uint16_t k = 0; k < sc.storages.size() && !found; ++k) {
      const StorageDef &sd = sc.storages[k];
      if (sd.scope_id != i || std::strcmp(sc.name(sd.name), noc::kTransactions.name) != 0) continue;
      int have = 0;
      for (uint16_t f = 0; f < sd.fields.size(); ++f) {
        const FieldDef &fd = sd.fields[f];
        const char *fn = sc.name(fd.name);
        if (std::strcmp(fn, txn_id) == 0) have |= 1;
        if (std::strcmp(fn, src) == 0) c.src_field = f, have |= 2;
        if (std::strcmp(fn, dst) == 0) c.dst_field = f, have |= 4;
        // opcode and addr are shown when the catalog has them (§3.1).
        if (std::strcmp(fn, addr) == 0 && wire::field_type_size(fd.type) > 0) c.addr_field = f;
        if (std::strcmp(fn, opcode) == 0 && wire::field_type_size(fd.type) > 0) {
          c.opcode_field = f;
          if (fd.type == USCOPE_FT_ENUM && fd.enum_id < sc.enums.size())
            for (const EnumValue &ev : sc.enums[fd.enum_id].values) {
              if (info.opcodes.size() <= ev.value) info.opcodes.resize(size_t{ev.value} + 1);
              info.opcodes[ev.value] = sc.name(ev.name);
            }
        }
      }
      if (have != 7 || !(sd.flags & USCOPE_SF_SPARSE))
        fail(USCOPE_ERR_SCHEMA,
             "noc scope \"%s\": its %s storage is not the sparse catalog of noc §3 (%s, %s and %s fields)",
             sc.name(s.name), noc::kTransactions.name, txn_id, src, dst);
      c.storage = k;
      found = true;
    }
    if (!found)
      fail(USCOPE_ERR_SCHEMA, "noc scope \"%s\" has no %s storage (the transaction catalog of noc §3)",
           sc.name(s.name), noc::kTransactions.name);
    const uint16_t slots = sc.storages[c.storage].num_slots;
    c.live.resize(slots);
    c.done.resize(slots);
    c.has_done.resize(slots);
    c.pending.resize(slots);
    cat_of_scope_[i] = static_cast<int32_t>(cats_.size());
    cat_of_storage_[c.storage] = static_cast<int32_t>(cats_.size());
    info.name = sc.name(s.name);
    info.scope_id = i;
    info.period_ps = c.period;
    lay_.scopes.push_back(std::move(info));
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
    const char *name = sc.name(ev.name);
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
      // threshold_cycles is told when the event has it
      if (slice_of(ev, sc, timeout.fields[0].name, &m.a)) {
        m.kind = kTimeout;
        if (!slice_of(ev, sc, timeout.fields[1].name, &m.b)) m.b = Slice{};
      }
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
std::vector<uint64_t> Decoder::start_keys(size_t seg) {
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
  ++lay_.segments_read;
  if (!v.seen) v.keys = ok ? live_keys(cats_, st) : std::vector<uint64_t>{};  // a segment without frames
  return v.keys;
}

// The slots of every catalog that have a birth (become valid) in segment
// seg, as sorted keys.
std::vector<uint64_t> Decoder::births_in(size_t seg) {
  std::vector<StorageState> st = r_.initial_state();
  struct Births {
    const Decoder &a;
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
  ++lay_.segments_read;
  std::sort(v.keys.begin(), v.keys.end());
  v.keys.erase(std::unique(v.keys.begin(), v.keys.end()), v.keys.end());
  return v.keys;
}

// Transactions live where the replay starts: issued before it, their issue unknown.
void Decoder::snapshot(const std::vector<StorageState> &st) {
  for (Catalog &c : cats_) {
    const StorageState &s = st[c.storage];
    for (uint32_t slot = 0; slot < c.live.size(); ++slot) {
      Hop &l = c.live[slot];
      l = Hop{};
      if (!s.valid(static_cast<uint16_t>(slot))) continue;
      const auto sl = static_cast<uint16_t>(slot);
      l.live = true;
      l.src = s.get(sl, c.src_field);
      l.dst = s.get(sl, c.dst_field);
      if (c.opcode_field != kNoField) l.opcode = s.get(sl, c.opcode_field);
      if (c.addr_field != kNoField) l.addr = s.get(sl, c.addr_field);
      l.chain.known = false;
    }
  }
}

void Decoder::tell(uint32_t n, uint16_t slot, const Hop &h) {
  const Catalog &c = cats_[n];
  NocHop x;
  x.scope = n;
  x.slot = slot;
  x.src_port = h.src;
  x.dst_port = h.dst;
  x.has_opcode = c.opcode_field != kNoField;
  x.has_addr = c.addr_field != kNoField;
  x.opcode = h.opcode;
  x.addr = h.addr;
  x.known_issue = h.known;
  x.issue_ps = h.birth_ps;
  x.open = h.live;
  x.complete_ps = h.done_ps;
  x.handoff_in = h.chain.handoff_in;
  x.continued = h.continued;
  x.handoffs_out = h.out;
  x.n_out = h.n_out;
  x.chain_birth_ps = h.chain.birth_ps;
  x.chain_hops = h.chain.hops;
  x.chain_known = h.chain.known;
  v_.hop(x);
}

// The slot's last completed hop is final: told, then forgotten.
void Decoder::retire(uint32_t n, uint16_t slot) {
  Catalog &c = cats_[n];
  if (!c.has_done[slot]) return;
  tell(n, slot, c.done[slot]);
  c.has_done[slot] = 0;
}

void Decoder::op(uint64_t t, const DeltaOp &o) {
  if (o.storage_id >= cat_of_storage_.size() || cat_of_storage_[o.storage_id] < 0) return;
  const uint32_t n = static_cast<uint32_t>(cat_of_storage_[o.storage_id]);
  Catalog &c = cats_[n];
  if (o.slot >= c.live.size()) return;
  Hop &l = c.live[o.slot];
  if (o.action == wire::DA_SLOT_CLEAR) {  // complete (§3.4)
    if (!l.live) return;
    retire(n, o.slot);
    c.done[o.slot] = l;
    c.done[o.slot].live = false;
    c.done[o.slot].done_ps = t;
    c.has_done[o.slot] = 1;
    l = Hop{};
    return;
  }
  if (o.action != wire::DA_SLOT_SET && o.action != wire::DA_SLOT_ADD) return;
  if (!l.live) {  // issue (§3.4): the slot becomes valid
    retire(n, o.slot);
    l = Hop{};
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
    if (o.field == c.opcode_field) l.opcode = o.value;
    if (o.field == c.addr_field) l.addr = o.value;
  }
}

void Decoder::event(uint64_t t, uint16_t type, const uint8_t *p, uint32_t size) {
  if (type >= evs_.size()) return;
  const EvMap &m = evs_[type];
  switch (m.kind) {
    case kOther: return;
    case kHandoff: {
      NocHandoff h;
      h.id = ++handoffs_;
      h.t_ps = t;
      h.src_scope_id = m.a.get(p, size), h.src_txn = m.b.get(p, size);
      h.dst_scope_id = m.c.get(p, size), h.dst_txn = m.d.get(p, size);
      v_.handoff(h);
      const uint64_t ss = h.src_scope_id, st = h.src_txn, ds = h.dst_scope_id, dt = h.dst_txn;
      const int32_t sn = ss < cat_of_scope_.size() ? cat_of_scope_[ss] : -1;
      const int32_t dn = ds < cat_of_scope_.size() ? cat_of_scope_[ds] : -1;
      Chain from;
      from.known = false;
      if (sn >= 0 && st < cats_[sn].live.size()) {
        Catalog &c = cats_[sn];
        Hop *src = c.live[st].live ? &c.live[st] : c.has_done[st] ? &c.done[st] : nullptr;
        if (src) {
          src->continued = true;
          if (src->n_out < kNocMaxHandoffsOut) src->out[src->n_out++] = h.id;
          from = src->chain;
        }
      }
      Chain next = from;
      next.hops = from.hops + 1;
      next.handoff_in = h.id;
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
      const Catalog &c = cats_[m.noc];
      NocInstant x;
      x.timeout = m.kind == kTimeout;
      x.scope = m.noc;
      x.event_scope_id = m.scope;
      x.t_ps = t;
      x.txn = m.a.get(p, size);
      x.value = m.b.get(p, size);
      if (x.txn < c.live.size() && c.live[x.txn].live) {
        x.live = true;
        x.src_port = c.live[x.txn].src;
        x.dst_port = c.live[x.txn].dst;
      }
      v_.instant(x);
      return;
    }
    case kCredit: {
      NocCredit x;
      x.scope = m.noc;
      x.event_scope_id = m.scope;
      x.t_ps = t;
      x.port = m.a.get(p, size);
      x.grant = m.b.get(p, size) == USCOPE_NOC_CREDIT_GRANT;
      x.credits = m.c.get(p, size);
      v_.credit(x);
      return;
    }
  }
}

void Decoder::replay_from(size_t first, size_t last) {
  std::vector<StorageState> st = r_.initial_state();
  struct V {
    Decoder &a;
    const std::vector<StorageState> &st;
    ReplayRider *rider;
    bool need_snapshot = true;
    void frame(uint64_t t) {
      if (need_snapshot) {  // the start state, before the first frame's items
        a.snapshot(st);
        need_snapshot = false;
      }
      if (rider) rider->frame(t);
    }
    // replay(.., until = t1) visits no op after t1, but every event; with a
    // rider every op is visited (it may want them), and this walk's are cut here.
    void op(uint64_t t, const DeltaOp &o) {
      if (rider) {
        rider->op(t, o);
        if (t > a.lay_.t1_ps) return;
      }
      a.op(t, o);
    }
    void event(uint64_t t, uint16_t type, const uint8_t *p, uint32_t n) {
      if (rider) rider->event(t, type, p, n);
      if (t <= a.lay_.t1_ps) a.event(t, type, p, n);
    }
  } v{*this, st, o_.rider};
  for (size_t i = first; i <= last; ++i) {
    if (o_.rider) o_.rider->begin_segment(i, st);
    const bool whole = r_.replay(i, st, v, o_.rider ? UINT64_MAX : lay_.t1_ps);
    if (o_.rider) o_.rider->end_segment(i, whole);
    ++lay_.segments_read;
  }
}

NocLayout Decoder::run() {
  resolve_schema();
  lay_.period_ps = cats_[0].period;
  const uint64_t P = lay_.period_ps;
  const auto &segs = r_.segments();
  uint64_t last_ps = r_.header().total_time_ps;
  if (!segs.empty()) last_ps = std::max(last_ps, segs.back().header.time_end_ps);
  lay_.max_cycle = last_ps / P;
  if (o_.start_cycle > o_.end_cycle)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "the range %llu:%llu starts after it ends",
         static_cast<unsigned long long>(o_.start_cycle), static_cast<unsigned long long>(o_.end_cycle));
  lay_.start_cycle = std::min(o_.start_cycle, lay_.max_cycle);
  lay_.end_cycle = std::min(o_.end_cycle, lay_.max_cycle);
  lay_.clamped = (o_.end_cycle > lay_.max_cycle && o_.end_cycle != UINT64_MAX) || o_.start_cycle > lay_.max_cycle;
  lay_.t0_ps = lay_.start_cycle * P;
  lay_.t1_ps = lay_.end_cycle >= UINT64_MAX / P ? UINT64_MAX : lay_.end_cycle * P + (P - 1);
  v_.begin(lay_);
  if (segs.empty()) return lay_;
  const uint64_t t0 = lay_.t0_ps, t1 = lay_.t1_ps;

  // The segment holding t0, then back until the transactions live there were issued in what is read.
  size_t k = 0;
  while (k + 1 < segs.size() && segs[k + 1].header.time_start_ps <= t0) ++k;
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
  while (last + 1 < segs.size() && segs[last + 1].header.time_start_ps <= t1) ++last;
  replay_from(j, last);

  // The last hops are final; what is live is told open.
  for (uint32_t n = 0; n < cats_.size(); ++n) {
    Catalog &c = cats_[n];
    for (size_t s = 0; s < c.live.size(); ++s) {
      retire(n, static_cast<uint16_t>(s));
      if (c.live[s].live) tell(n, static_cast<uint16_t>(s), c.live[s]);
    }
  }
  return lay_;
}

// analyze_noc: the report, a visitor of the decoder.
class Report final : public NocVisitor {
 public:
  NocReport rep;

  void begin(const NocLayout &l) override {
    rep.start_cycle = l.start_cycle;
    rep.end_cycle = l.end_cycle;
    rep.max_cycle = l.max_cycle;
    rep.clamped = l.clamped;
    rep.period_ps = l.period_ps;
    t0_ = l.t0_ps;
    t1_ = l.t1_ps;
    periods_.clear();
    for (const NocScopeInfo &s : l.scopes) {
      NocScopeRow row;
      row.name = s.name;
      row.scope_id = s.scope_id;
      row.period_ps = s.period_ps;
      rep.scopes.push_back(std::move(row));
      periods_.push_back(s.period_ps);
    }
  }

  void hop(const NocHop &h) override {
    NocScopeRow &row = rep.scopes[h.scope];
    if (h.open) {
      ++row.in_flight, ++rep.in_flight;
      return;
    }
    if (!in_range(h.complete_ps)) return;
    NocPairRow &pr = pair(h.scope, h.src_port, h.dst_port);
    ++rep.counts.completed, ++row.counts.completed, ++pr.counts.completed;
    if (h.known_issue) {
      const uint64_t cycles = (h.complete_ps - h.issue_ps) / periods_[h.scope];
      rep.latency.add(cycles);
      row.latency.add(cycles);
      pr.latency.add(cycles);
    } else {
      ++rep.counts.unknown_issue, ++row.counts.unknown_issue, ++pr.counts.unknown_issue;
    }
    // The last hop of its end-to-end transaction.
    if (h.continued || !h.chain_known) return;
    rep.end_to_end.add((h.complete_ps - h.chain_birth_ps) / rep.period_ps);
    if (h.chain_hops > 1) ++rep.multi_hop;
  }

  void handoff(const NocHandoff &h) override {
    if (in_range(h.t_ps)) ++rep.handoffs;
  }

  void instant(const NocInstant &x) override {
    if (!in_range(x.t_ps)) return;
    NocScopeRow &row = rep.scopes[x.scope];
    NocPairRow *pr = x.live ? &pair(x.scope, x.src_port, x.dst_port) : nullptr;
    NocCounts *all[] = {&rep.counts, &row.counts, pr ? &pr->counts : nullptr};
    if (x.timeout) {
      for (NocCounts *c : all)
        if (c) ++c->timeouts;
      return;
    }
    if (x.value < std::size(rep.retry_reasons)) ++rep.retry_reasons[x.value];
    for (NocCounts *c : all)
      if (c) {
        ++c->retries;
        if (x.value == USCOPE_NOC_RETRY_NO_CREDITS) ++c->credit_stalls;
      }
  }

  void credit(const NocCredit &x) override {
    if (!in_range(x.t_ps)) return;
    auto [it, fresh] = ports_.try_emplace({x.event_scope_id, x.port});
    NocPortRow &pr = it->second;
    if (fresh) {
      pr.scope = x.scope;
      pr.scope_id = x.event_scope_id;
      pr.where = where_(x.event_scope_id);
      pr.port = static_cast<uint32_t>(x.port);
    }
    if (x.grant) {
      ++pr.grants;
      pr.credits_granted += x.credits;
    } else {
      ++pr.consumes;
      pr.credits_consumed += x.credits;
    }
  }

  void finish(const NocLayout &l) {
    rep.segments_read = l.segments_read;
    std::sort(pairs_.begin(), pairs_.end(), [](const NocPairRow &a, const NocPairRow &b) {
      return std::tie(a.scope, a.src_port, a.dst_port) < std::tie(b.scope, b.src_port, b.dst_port);
    });
    rep.pairs = std::move(pairs_);
    for (auto &[key, row] : ports_) rep.ports.push_back(row);
  }

  std::function<std::string(uint16_t)> where_;

 private:
  bool in_range(uint64_t t) const { return t >= t0_ && t <= t1_; }
  NocPairRow &pair(uint32_t n, uint64_t src, uint64_t dst) {
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

  uint64_t t0_ = 0, t1_ = 0;
  std::vector<uint64_t> periods_;
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
};

}  // namespace

NocLayout visit_noc(TraceReader &r, const NocOptions &o, NocVisitor &v) { return Decoder(r, o, v).run(); }

NocReport analyze_noc(TraceReader &r, const NocOptions &o) {
  Report rep;
  rep.where_ = [&r](uint16_t scope) { return std::string(r.schema().name(r.schema().scopes[scope].name)); };
  const NocLayout l = visit_noc(r, o, rep);
  rep.finish(l);
  return std::move(rep.rep);
}

void require_noc(TraceReader &r) {
  const NocOptions o;
  NocVisitor none;
  Decoder(r, o, none).resolve_schema();  // reads the schema only
}

}  // namespace uscope::analysis
