// Signature drift between sv/uscope_pkg.sv and the C side. The other half of
// the check is the compile of dpi/src/entry.cpp against the generated
// __Dpi.h (target uscope_dpi_drift_entry, run as the DpiDriftBridgeCompile test).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sig.hpp"

namespace {

TEST(DpiDrift, ImportListComesFromVerilator) {
  const drift::Table sv = drift::sv_side();
  std::set<std::string> names;
  for (const auto &e : sv) names.insert(e.first);
  EXPECT_EQ(names.size(), sv.size()) << "a name is listed twice";
  // A few of each kind, so that an empty or truncated list cannot pass.
  for (const char *n : {"uscope_begin_cycle", "uscope_end_cycle", "uscope_slot_set", "uscope_prop_set",
                        "uscope_open", "uscope_close", "uscope_event_raw", "uscope_handle",
                        "uscope_sv_schema_storage", "uscope_cpu_fetch", "uscope_noc_issue",
                        "uscope_npu_cmd_enqueue", "uscope_npu_counter_add"})
    EXPECT_TRUE(names.count(n)) << n << " is not imported by uscope_pkg";
}

TEST(DpiDrift, SignaturesMatchTheCHeaders) {
  const drift::Table sv = drift::sv_side(), c = drift::c_side();
  ASSERT_EQ(sv.size(), c.size());
  for (size_t i = 0; i < sv.size(); ++i) {
    ASSERT_EQ(sv[i].first, c[i].first);
    EXPECT_EQ(sv[i].second, c[i].second)
        << sv[i].first << ": uscope_pkg.sv (via Verilator) says " << sv[i].second << ", the C header says "
        << c[i].second;
  }
}

// Every import resolves from libuscope_dpi.so (which brings libuscope.so),
// and is defined by exactly one of the two libraries.
TEST(DpiDrift, EveryImportIsExportedByExactlyOneLibrary) {
  void *dpi = dlopen(USCOPE_DPI_LIB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(dpi, nullptr) << dlerror();
  void *core = dlopen(USCOPE_CORE_LIB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(core, nullptr) << dlerror();
  size_t in_core = 0, in_bridge = 0;
  for (const auto &e : drift::sv_side()) {
    const char *name = e.first.c_str();
    void *p = dlsym(dpi, name);
    ASSERT_NE(p, nullptr) << name << " is imported by uscope_pkg but exported by neither library";
    Dl_info info{};
    ASSERT_NE(dladdr(p, &info), 0) << name;
    const std::string where = info.dli_fname ? info.dli_fname : "";
    if (where.find("libuscope_dpi.so") != std::string::npos) {
      ++in_bridge;
      // The bridge must not shadow a libuscope symbol.
      EXPECT_EQ(dlsym(core, name), nullptr) << name << " is defined by both libuscope and the bridge";
    } else {
      ++in_core;
      EXPECT_NE(where.find("libuscope.so"), std::string::npos) << name << " comes from " << where;
      EXPECT_EQ(dlsym(core, name), p) << name;
    }
  }
  EXPECT_GT(in_core, 50u);   // transport + protocol per-cycle calls
  EXPECT_GT(in_bridge, 20u);  // the bridge's conversions
  dlclose(core);
  dlclose(dpi);
}

}  // namespace
