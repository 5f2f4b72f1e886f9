// The noc protocol helpers: the declared schema follows the spec's noc chapter
// (with the scope properties as "<scope>/key" DUT properties), read and write
// transactions read back exactly, txn_handoff is shared under a parent, and
// every misuse gets its status.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "test_protocol_util.hpp"

namespace {

using uscope::test::TempDir;
using namespace uscope::test::proto;
using Strings = std::vector<std::string>;
using Props = std::vector<std::pair<std::string, std::string>>;

// The AXI4 crossbar of noc §10.1.
const char *const kStages[] = {"ar_issue",      "route",  "arbitrate", "transport",
                               "target_accept", "r_data", "r_last"};
enum : uint8_t { kArIssue, kRoute, kArbitrate, kTransport, kTargetAccept, kRData, kRLast };
const char *const kOpcodes[] = {"read", "write", "read_linked", "write_cond"};
enum : uint8_t { kRead, kWrite };
constexpr uint16_t kMaxTxns = 64;
constexpr uint16_t ORT = 0, VC0 = 1;

struct Xbar {
  uscope_field_t qos[1] = {{"qos", USCOPE_FT_U8, 0, 0, 0}};
  uscope_field_t vc[1] = {{"vc", USCOPE_FT_U8, 0, 0, 0}};
  uscope_noc_buffer_def_t buffers[2] = {{"ort", 32, nullptr, 0}, {"vc_buf_0", 4, vc, 1}};
  const char *counters[1] = {"bytes_fwd"};
  uscope_noc_config_t cfg{};
  explicit Xbar(const char *name = "noc0", uint16_t parent = 0) {
    cfg.struct_size = sizeof cfg;
    cfg.scope_name = name;
    cfg.parent_scope_id = parent;
    cfg.clock_id = USCOPE_CLOCK_INHERIT;
    cfg.bus_protocol = "AXI4";
    cfg.topology = "crossbar";
    cfg.stages = kStages;
    cfg.num_stages = 7;
    cfg.opcodes = kOpcodes;
    cfg.num_opcodes = 4;
    cfg.max_txns = kMaxTxns;
    cfg.buffers = buffers;
    cfg.num_buffers = 2;
    cfg.counters = counters;
    cfg.num_counters = 1;
    cfg.data_width = 64;
    cfg.num_ports = 6;
    cfg.txn_extra_fields = qos;
    cfg.num_txn_extra_fields = 1;
  }
};

// The Xbar declared and a writer open on a fresh file.
struct NocTrace : OpenTrace<Xbar, uscope_noc_t> {
  NocTrace() : OpenTrace("uscope_noc", uscope_noc_declare) {}
};

TEST(ProtocolNoc, DeclaresTheSchemaOfTheSpecChapter) {
  NocTrace o;
  ASSERT_NO_FATAL_FAILURE(o.open());
  uscope_writer_t *w = o.w;
  uscope_noc_t *noc = o.h;
  const uscope_noc_ids_t ids = ids_of(noc);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);

  Trace t(o.path);
  ASSERT_TRUE(t.ok());
  EXPECT_STREQ(t.scope(ids.scope_id).name, "noc0");
  EXPECT_STREQ(t.scope(ids.scope_id).protocol, "noc");
  EXPECT_EQ(t.scope(ids.scope_id).parent_id, 0);

  EXPECT_EQ(t.enum_name(ids.opcode_enum), "opcode");
  EXPECT_EQ(t.enum_values(ids.opcode_enum), Strings(kOpcodes, kOpcodes + 4));
  EXPECT_EQ(t.enum_name(ids.pipeline_stage_enum), "pipeline_stage");
  EXPECT_EQ(t.enum_values(ids.pipeline_stage_enum), Strings(kStages, kStages + 7));
  EXPECT_EQ(t.enum_name(ids.retry_reason_enum), "retry_reason");
  EXPECT_EQ(t.enum_values(ids.retry_reason_enum),
            (Strings{"target_busy", "no_credits", "vc_full", "arb_lost", "protocol_retry"}));
  EXPECT_EQ(t.enum_name(ids.credit_direction_enum), "credit_direction");
  EXPECT_EQ(t.enum_values(ids.credit_direction_enum), (Strings{"grant", "consume"}));

  // Transaction catalog (§3): sparse, not a buffer; the seven required fields.
  ASSERT_EQ(t.storage("transactions", ids.scope_id), ids.transactions);
  EXPECT_EQ(t.storage_info(ids.transactions).flags, USCOPE_SF_SPARSE);
  EXPECT_EQ(t.storage_info(ids.transactions).num_slots, kMaxTxns);
  EXPECT_EQ(shape(t.storage_fields(ids.transactions)),
            (Strings{"txn_id:U32", "opcode:ENUM", "addr:U64", "len:U16", "size:U8", "src_port:U16",
                     "dst_port:U16", "qos:U8"}));
  EXPECT_EQ(t.storage_fields(ids.transactions)[1].enum_id, ids.opcode_enum);
  // Buffers (§4.2).
  ASSERT_EQ(ids.num_buffers, 2);
  EXPECT_EQ(t.storage("ort", ids.scope_id), ids.buffers[ORT]);
  EXPECT_EQ(t.storage_info(ids.buffers[ORT]).flags, USCOPE_SF_SPARSE | USCOPE_SF_BUFFER);
  EXPECT_EQ(t.storage_info(ids.buffers[ORT]).num_slots, 32);
  EXPECT_EQ(shape(t.storage_fields(ids.buffers[ORT])), Strings{"txn_id:U32"});
  EXPECT_EQ(t.storage("vc_buf_0", ids.scope_id), ids.buffers[VC0]);
  EXPECT_EQ(shape(t.storage_fields(ids.buffers[VC0])), (Strings{"txn_id:U32", "vc:U8"}));
  // Counters (§6), in order, then the extra one.
  ASSERT_EQ(ids.num_counters, 6);
  const char *const counters[] = {"bytes_tx", "bytes_rx",      "arb_conflicts",
                                  "retries",  "txn_completed", "bytes_fwd"};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(t.storage(counters[i], ids.scope_id), ids.counters[i]) << counters[i];
    EXPECT_EQ(t.storage_info(ids.counters[i]).num_slots, 1);
    EXPECT_EQ(t.storage_info(ids.counters[i]).flags, 0);
    EXPECT_EQ(shape(t.storage_fields(ids.counters[i])), Strings{"count:U64"});
  }
  // Events (§5); txn_handoff on the parent, the root here.
  struct Ev {
    const char *name;
    uint16_t id;
    Strings fields;
  };
  const Ev evs[] = {
      {"stage_transition", ids.stage_transition, {"txn_id:U32", "stage:ENUM"}},
      {"beat", ids.beat, {"txn_id:U32", "beat_num:U16", "data_bytes:U16"}},
      {"retry", ids.retry, {"txn_id:U32", "reason:ENUM"}},
      {"timeout", ids.timeout, {"txn_id:U32", "threshold_cycles:U32"}},
      {"link_credit", ids.link_credit, {"port:U16", "direction:ENUM", "credits:U8"}},
      {"arb_decision", ids.arb_decision, {"winner_txn:U32", "port:U16", "num_contenders:U8"}},
      {"annotate", ids.annotate, {"txn_id:U32", "text:STRING_REF"}},
  };
  for (const Ev &e : evs) {
    EXPECT_EQ(t.event_type(e.name, ids.scope_id), e.id) << e.name;
    EXPECT_EQ(shape(t.event_fields(e.id)), e.fields) << e.name;
  }
  EXPECT_EQ(t.event_fields(ids.stage_transition)[1].enum_id, ids.pipeline_stage_enum);
  EXPECT_EQ(t.event_fields(ids.retry)[1].enum_id, ids.retry_reason_enum);
  EXPECT_EQ(t.event_fields(ids.link_credit)[1].enum_id, ids.credit_direction_enum);
  EXPECT_EQ(ids.handoff_scope_id, 0);
  EXPECT_EQ(t.event_type("txn_handoff", 0), ids.txn_handoff);
  EXPECT_EQ(shape(t.event_fields(ids.txn_handoff)),
            (Strings{"src_scope:U16", "src_txn_id:U32", "dst_scope:U16", "dst_txn_id:U32"}));

  // The scope properties of §8, keyed by scope name.
  EXPECT_EQ(
      t.dut_all(),
      (Props{{"noc0/noc.protocol_version", "0.1"},
             {"noc0/noc.bus_protocol", "AXI4"},
             {"noc0/noc.topology", "crossbar"},
             {"noc0/noc.pipeline_stages", "ar_issue,route,arbitrate,transport,target_accept,r_data,r_last"},
             {"noc0/clock.period_ps", "1000"},
             {"noc0/noc.data_width", "64"},
             {"noc0/noc.num_ports", "6"}}));
  uscope_noc_free(noc);
}

TEST(ProtocolNoc, ReadAndWriteTransactionsReadBackExactly) {
  NocTrace o;
  ASSERT_NO_FATAL_FAILURE(o.open());
  uscope_writer_t *w = o.w;
  uscope_noc_t *noc = o.h;
  const uscope_noc_ids_t ids = ids_of(noc);
  auto cycle = [&](uint64_t c) { ASSERT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK); };
  auto end = [&] { ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK) << uscope_writer_error(w); };

  // A 4-beat read (txn 5) from port 0 to port 4, and a 2-beat write (txn 9)
  // from port 1 that is retried once for lack of credits.
  cycle(0);
  ASSERT_EQ(uscope_noc_issue(w, noc, 5, kRead, 0x80001000ull, 4, 3, 0, 4), USCOPE_OK);
  ASSERT_EQ(uscope_noc_txn_set(w, noc, 5, 7, 2), USCOPE_OK);  // qos
  ASSERT_EQ(uscope_noc_buffer_insert(w, noc, ORT, 0, 5), USCOPE_OK);
  ASSERT_EQ(uscope_noc_issue(w, noc, 9, kWrite, 0x90000000ull, 2, 3, 1, 4), USCOPE_OK);
  end();
  cycle(1);
  ASSERT_EQ(uscope_noc_stage_transition(w, noc, 5, kArbitrate), USCOPE_OK);
  ASSERT_EQ(uscope_noc_stage_transition(w, noc, 9, kArbitrate), USCOPE_OK);
  ASSERT_EQ(uscope_noc_arb_decision(w, noc, 5, 4, 2), USCOPE_OK);  // 9 lost: a conflict
  ASSERT_EQ(uscope_noc_retry(w, noc, 9, USCOPE_NOC_RETRY_NO_CREDITS), USCOPE_OK);
  ASSERT_EQ(uscope_noc_link_credit(w, noc, 4, USCOPE_NOC_CREDIT_CONSUME, 1), USCOPE_OK);
  ASSERT_EQ(uscope_noc_buffer_insert(w, noc, VC0, 2, 9), USCOPE_OK);
  ASSERT_EQ(uscope_noc_buffer_set(w, noc, VC0, 2, 1, 3), USCOPE_OK);  // vc 3
  end();
  cycle(2);
  ASSERT_EQ(uscope_noc_stage_transition(w, noc, 5, kRData), USCOPE_OK);
  for (uint16_t b = 0; b < 4; ++b) ASSERT_EQ(uscope_noc_beat(w, noc, 5, b, 8), USCOPE_OK);
  ASSERT_EQ(uscope_noc_counter_add(w, noc, USCOPE_NOC_COUNTER_BYTES_RX, 32), USCOPE_OK);
  ASSERT_EQ(uscope_noc_arb_decision(w, noc, 9, 4, 1), USCOPE_OK);  // alone: no conflict
  ASSERT_EQ(uscope_noc_link_credit(w, noc, 4, USCOPE_NOC_CREDIT_GRANT, 4), USCOPE_OK);
  end();
  cycle(3);
  ASSERT_EQ(uscope_noc_stage_transition(w, noc, 5, kRLast), USCOPE_OK);
  ASSERT_EQ(uscope_noc_complete(w, noc, 5), USCOPE_OK);
  ASSERT_EQ(uscope_noc_buffer_remove(w, noc, ORT, 0), USCOPE_OK);
  ASSERT_EQ(uscope_noc_beat(w, noc, 9, 0, 8), USCOPE_OK);
  ASSERT_EQ(uscope_noc_beat(w, noc, 9, 1, 8), USCOPE_OK);
  ASSERT_EQ(uscope_noc_counter_add(w, noc, USCOPE_NOC_COUNTER_BYTES_TX, 16), USCOPE_OK);
  ASSERT_EQ(uscope_noc_annotate(w, noc, 9, "slow target"), USCOPE_OK);
  end();
  cycle(4);
  ASSERT_EQ(uscope_noc_timeout(w, noc, 9, 1000), USCOPE_OK);
  ASSERT_EQ(uscope_noc_counter_add(w, noc, 5, 48), USCOPE_OK);  // bytes_fwd, the extra counter
  end();
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);

  Trace t(o.path);
  ASSERT_TRUE(t.ok());
  const auto ev = t.events();
  struct Want {
    uint64_t cycle;
    uint16_t type;
    std::vector<std::pair<const char *, uint64_t>> f;
  };
  std::vector<Want> want = {
      {0, ids.stage_transition, {{"txn_id", 5}, {"stage", kArIssue}}},
      {0, ids.stage_transition, {{"txn_id", 9}, {"stage", kArIssue}}},
      {1, ids.stage_transition, {{"txn_id", 5}, {"stage", kArbitrate}}},
      {1, ids.stage_transition, {{"txn_id", 9}, {"stage", kArbitrate}}},
      {1, ids.arb_decision, {{"winner_txn", 5}, {"port", 4}, {"num_contenders", 2}}},
      {1, ids.retry, {{"txn_id", 9}, {"reason", USCOPE_NOC_RETRY_NO_CREDITS}}},
      {1, ids.link_credit, {{"port", 4}, {"direction", USCOPE_NOC_CREDIT_CONSUME}, {"credits", 1}}},
      {2, ids.stage_transition, {{"txn_id", 5}, {"stage", kRData}}},
  };
  for (uint64_t b = 0; b < 4; ++b)
    want.push_back({2, ids.beat, {{"txn_id", 5}, {"beat_num", b}, {"data_bytes", 8}}});
  want.push_back({2, ids.arb_decision, {{"winner_txn", 9}, {"port", 4}, {"num_contenders", 1}}});
  want.push_back({2, ids.link_credit, {{"port", 4}, {"direction", USCOPE_NOC_CREDIT_GRANT}, {"credits", 4}}});
  want.push_back({3, ids.stage_transition, {{"txn_id", 5}, {"stage", kRLast}}});
  want.push_back({3, ids.beat, {{"txn_id", 9}, {"beat_num", 0}, {"data_bytes", 8}}});
  want.push_back({3, ids.beat, {{"txn_id", 9}, {"beat_num", 1}, {"data_bytes", 8}}});
  want.push_back({3, ids.annotate, {{"txn_id", 9}}});
  want.push_back({4, ids.timeout, {{"txn_id", 9}, {"threshold_cycles", 1000}}});
  ASSERT_EQ(ev.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(ev[i].time_ps, want[i].cycle * 1000);
    EXPECT_EQ(ev[i].type_id, want[i].type) << ev[i].name;
    for (const auto &[k, v] : want[i].f) EXPECT_EQ(ev[i][k], v) << k;
  }
  EXPECT_EQ(t.str(ev[want.size() - 2]["text"]), "slow target");

  // Cycle 1: both transactions in the catalog with all their fields.
  const uscope_state_t *s1 = t.state_at(1000);
  EXPECT_EQ(occupancy(s1, ids.transactions), 2u);
  const uint64_t read[] = {5, kRead, 0x80001000ull, 4, 3, 0, 4, 2};
  for (uint16_t f = 0; f < 8; ++f) EXPECT_EQ(field(s1, ids.transactions, 5, f), read[f]) << f;
  EXPECT_EQ(field(s1, ids.transactions, 9, USCOPE_NOC_FIELD_OPCODE), kWrite);
  EXPECT_EQ(field(s1, ids.transactions, 9, USCOPE_NOC_FIELD_SRC_PORT), 1u);
  EXPECT_EQ(field(s1, ids.buffers[ORT], 0, 0), 5u);
  EXPECT_EQ(field(s1, ids.buffers[VC0], 2, 0), 9u);
  EXPECT_EQ(field(s1, ids.buffers[VC0], 2, 1), 3u);
  EXPECT_EQ(counter(s1, ids.counters[USCOPE_NOC_COUNTER_ARB_CONFLICTS]), 1u);
  EXPECT_EQ(counter(s1, ids.counters[USCOPE_NOC_COUNTER_RETRIES]), 1u);
  // The end: the read completed, the write still in flight.
  const uscope_state_t *s4 = t.state_at(4000);
  EXPECT_EQ(occupancy(s4, ids.transactions), 1u);
  EXPECT_TRUE(valid(s4, ids.transactions, 9));
  EXPECT_EQ(occupancy(s4, ids.buffers[ORT]), 0u);
  const uint64_t counters[] = {16, 32, 1, 1, 1, 48};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(counter(s4, ids.counters[i]), counters[i]) << i;
  uscope_noc_free(noc);
}

TEST(ProtocolNoc, FabricsUnderOneParentShareTxnHandoff) {
  // noc §10.3: two chiplet fabrics and a D2D link, the handoff at the root.
  TempDir dir("uscope_noc");
  const std::string path = dir.file("t.uscope");
  uscope_schema_t *s = base_schema(1000);
  uint8_t fast = 0;
  ASSERT_EQ(uscope_schema_add_clock(s, &fast, "noc_clk", 500), USCOPE_OK);
  uint16_t chiplet0 = 0;
  ASSERT_EQ(uscope_schema_add_scope(s, &chiplet0, "chiplet0", 0, nullptr, fast), USCOPE_OK);
  Xbar a("chiplet0_noc", chiplet0), link("d2d_link", 0), clash("chiplet0", 0);
  a.cfg.bus_protocol = "CHI";
  a.cfg.topology = "mesh";
  a.cfg.dim_x = 4;
  a.cfg.dim_y = 4;
  a.cfg.num_vcs = 2;
  a.cfg.routing = "xy";
  a.cfg.num_ports = 0;  // ports unchecked
  a.cfg.data_width = 0;
  link.cfg.bus_protocol = "UCIe";
  link.cfg.topology = "p2p";
  link.cfg.opcodes = nullptr;  // the default read, write
  link.cfg.num_opcodes = 0;
  uscope_noc_t *na = nullptr, *nl = nullptr, *nc = nullptr;
  ASSERT_EQ(uscope_noc_declare(s, &na, &a.cfg), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(uscope_noc_declare(s, &nl, &link.cfg), USCOPE_OK) << uscope_last_error();
  // Properties are keyed by scope name, so a second scope of the same name is refused.
  EXPECT_EQ(uscope_noc_declare(s, &nc, &clash.cfg), USCOPE_ERR_SCHEMA);
  EXPECT_TRUE(contains(uscope_last_error(), "scope name \"chiplet0\" is used by scope 1"))
      << uscope_last_error();
  const uscope_noc_ids_t ia = ids_of(na), il = ids_of(nl);
  EXPECT_EQ(ia.handoff_scope_id, chiplet0);  // its own parent
  EXPECT_EQ(il.handoff_scope_id, 0);
  EXPECT_EQ(il.num_opcodes, 2);
  EXPECT_EQ(ia.pipeline_stage_enum, il.pipeline_stage_enum);  // same stages: shared

  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  ASSERT_EQ(uscope_begin_cycle(w, 0), USCOPE_OK);
  ASSERT_EQ(uscope_noc_issue(w, na, 42, kRead, 0x1000, 1, 6, 900, 901), USCOPE_OK);  // any port
  ASSERT_EQ(uscope_noc_issue(w, nl, 7, 1, 0x1000, 1, 6, 0, 1), USCOPE_OK);
  ASSERT_EQ(uscope_noc_txn_handoff(w, nl, ia.scope_id, 42, il.scope_id, 7), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);

  Trace t(path);
  const auto ev = t.events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[2].type_id, il.txn_handoff);
  EXPECT_EQ(ev[2]["src_scope"], ia.scope_id);
  EXPECT_EQ(ev[2]["src_txn_id"], 42u);
  EXPECT_EQ(ev[2]["dst_scope"], il.scope_id);
  EXPECT_EQ(ev[2]["dst_txn_id"], 7u);
  EXPECT_EQ(t.dut("chiplet0_noc/clock.period_ps"), "500");  // inherited from chiplet0
  EXPECT_EQ(t.dut("chiplet0_noc/noc.topology"), "mesh");
  EXPECT_EQ(t.dut("chiplet0_noc/noc.dim_x"), "4");
  EXPECT_EQ(t.dut("chiplet0_noc/noc.dim_y"), "4");
  EXPECT_EQ(t.dut("chiplet0_noc/noc.num_vcs"), "2");
  EXPECT_EQ(t.dut("chiplet0_noc/noc.routing"), "xy");
  EXPECT_EQ(t.dut("chiplet0_noc/noc.num_ports"), "<absent>");
  EXPECT_EQ(t.dut("d2d_link/noc.bus_protocol"), "UCIe");
  EXPECT_EQ(t.dut("d2d_link/clock.period_ps"), "1000");
  EXPECT_EQ(t.enum_values(il.opcode_enum), (Strings{"read", "write"}));
  uscope_noc_free(na);
  uscope_noc_free(nl);
}

TEST(ProtocolNoc, ArgumentErrorsAreSpecificAndWriteNothing) {
  NocTrace o;
  ASSERT_NO_FATAL_FAILURE(o.open());
  uscope_writer_t *w = o.w;
  uscope_noc_t *noc = o.h;
  ASSERT_EQ(uscope_begin_cycle(w, 0), USCOPE_OK);
  refused(uscope_noc_issue(w, noc, kMaxTxns, kRead, 0, 1, 3, 0, 1), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_noc_issue: txn_id 64 is not a transaction of scope \"noc0\" (max_txns 64)");
  refused(uscope_noc_issue(w, noc, 0, 4, 0, 1, 3, 0, 1), USCOPE_ERR_VALUE_RANGE, "opcode 4 is out of range");
  refused(uscope_noc_issue(w, noc, 0, kRead, 0, 1, 3, 6, 1), USCOPE_ERR_VALUE_RANGE,
          "src_port 6 is not a port of scope \"noc0\" (num_ports 6)");
  refused(uscope_noc_issue(w, noc, 0, kRead, 0, 1, 3, 0, 9), USCOPE_ERR_VALUE_RANGE, "dst_port 9");
  refused(uscope_noc_stage_transition(w, noc, 0, 7), USCOPE_ERR_VALUE_RANGE, "stage 7 is out of range");
  refused(uscope_noc_complete(w, noc, 100), USCOPE_ERR_UNKNOWN_SLOT, "uscope_noc_complete: txn_id 100");
  refused(uscope_noc_beat(w, noc, 64, 0, 8), USCOPE_ERR_UNKNOWN_SLOT, "uscope_noc_beat: txn_id 64");
  refused(uscope_noc_retry(w, noc, 0, 5), USCOPE_ERR_VALUE_RANGE, "uscope_noc_retry: reason 5");
  refused(uscope_noc_timeout(w, noc, 64, 10), USCOPE_ERR_UNKNOWN_SLOT, "uscope_noc_timeout");
  refused(uscope_noc_link_credit(w, noc, 0, 2, 1), USCOPE_ERR_VALUE_RANGE, "direction 2");
  refused(uscope_noc_link_credit(w, noc, 6, 0, 1), USCOPE_ERR_VALUE_RANGE, "port 6");
  refused(uscope_noc_arb_decision(w, noc, 64, 0, 2), USCOPE_ERR_UNKNOWN_SLOT, "winner_txn 64");
  refused(uscope_noc_annotate(w, noc, 0, nullptr), USCOPE_ERR_INVALID_ARGUMENT, "text is NULL");
  refused(uscope_noc_buffer_insert(w, noc, 2, 0, 0), USCOPE_ERR_UNKNOWN_STORAGE,
          "buffer 2 of scope \"noc0\"");
  refused(uscope_noc_buffer_insert(w, noc, ORT, 32, 0), USCOPE_ERR_UNKNOWN_SLOT, "slot 32 of buffer 0");
  refused(uscope_noc_buffer_set(w, noc, VC0, 0, 2, 0), USCOPE_ERR_UNKNOWN_FIELD, "field 2 of buffer 1");
  refused(uscope_noc_buffer_set(w, noc, VC0, 0, 0, 64), USCOPE_ERR_UNKNOWN_SLOT, "txn_id (field 0) 64");
  refused(uscope_noc_buffer_remove(w, noc, ORT, 40), USCOPE_ERR_UNKNOWN_SLOT, "slot 40");
  refused(uscope_noc_counter_add(w, noc, 6, 1), USCOPE_ERR_UNKNOWN_STORAGE, "counter 6");
  refused(uscope_noc_txn_set(w, noc, 0, 0, 1), USCOPE_ERR_UNKNOWN_FIELD, "fields 1..7 may be set");
  refused(uscope_noc_txn_set(w, noc, 0, USCOPE_NOC_FIELD_OPCODE, 4), USCOPE_ERR_VALUE_RANGE, "opcode 4");
  refused(uscope_noc_complete(nullptr, noc, 0), USCOPE_ERR_INVALID_ARGUMENT, "writer handle is NULL");
  refused(uscope_noc_complete(w, nullptr, 0), USCOPE_ERR_INVALID_ARGUMENT, "protocol handle is NULL");
  EXPECT_STREQ(uscope_writer_error(w), "");
  ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  // Outside a cycle: the writer's own sticky BAD_STATE.
  EXPECT_EQ(uscope_noc_complete(w, noc, 0), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_ERR_BAD_STATE);
  Trace t(o.path);
  EXPECT_TRUE(t.events().empty());
  uscope_noc_free(noc);
}

TEST(ProtocolNoc, BadConfigsAreRefusedAndLeaveTheSchemaUnchanged) {
  uscope_schema_t *s = base_schema();
  uscope_noc_t *noc = nullptr;
  const DeclareRefusals<Xbar, uscope_noc_t> refused(uscope_noc_declare, "uscope_noc_declare", s);
  refused.after([](Xbar &x) { x.cfg.bus_protocol = nullptr; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.bus_protocol is NULL");
  refused.after([](Xbar &x) { x.cfg.topology = nullptr; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.topology is NULL");
  refused.after([](Xbar &x) { x.cfg.num_stages = 0; }, USCOPE_ERR_INVALID_ARGUMENT, "cfg.stages: no names");
  refused.after([](Xbar &x) { x.cfg.max_txns = 0; }, USCOPE_ERR_INVALID_ARGUMENT, "cfg.max_txns is 0");
  refused.after([](Xbar &x) { x.buffers[0].num_slots = 0; }, USCOPE_ERR_INVALID_ARGUMENT,
                "\"ort\" has 0 slots");
  refused.after([](Xbar &x) { x.cfg.opcodes = nullptr; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.opcodes is NULL but");
  refused.after(
      [](Xbar &x) {
        static const char *const ops[] = {"read", "read"};
        x.cfg.opcodes = ops;
        x.cfg.num_opcodes = 2;
      },
      USCOPE_ERR_INVALID_ARGUMENT, "cfg.opcodes[1] \"read\" repeats");
  refused.after([](Xbar &x) { x.qos[0].name = "addr"; }, USCOPE_ERR_INVALID_ARGUMENT, "is named \"addr\"");
  refused.after([](Xbar &x) { x.counters[0] = "retries"; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.counters[] \"retries\"");
  refused.after([](Xbar &x) { x.cfg.scope_name = "/"; }, USCOPE_ERR_SCHEMA,
                "scope name \"/\" is used by scope 0");
  {
    Xbar x("noc0", 3);
    refused(x.cfg, USCOPE_ERR_SCHEMA, "parent scope 3 does not exist");
  }
  Xbar good;
  ASSERT_EQ(uscope_noc_declare(s, &noc, &good.cfg), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(ids_of(noc).scope_id, 1);
  EXPECT_EQ(ids_of(noc).transactions, 0);
  EXPECT_EQ(ids_of(noc).opcode_enum, 0);
  EXPECT_EQ(ids_of(noc).txn_handoff, 7);  // after the seven events of the scope
  uscope_noc_free(noc);
  uscope_schema_free(s);
}

}  // namespace
