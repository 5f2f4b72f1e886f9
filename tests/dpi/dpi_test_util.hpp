// Helpers of the DPI bridge tests: a temp dir and a reader that answers
// questions about a finished trace through libuscope's reader C API.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "uscope/uscope.h"

namespace dpitest {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::path(testing::TempDir()) / "uscope_dpi_XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data())) path_ = buf.data();
    else ADD_FAILURE() << "mkdtemp failed";
  }
  ~TempDir() {
    if (path_.empty() || testing::Test::HasFailure()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  std::string write(const std::string &name, const std::string &text) const {
    const std::string p = file(name);
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
};

struct Event {
  uint64_t time;
  uint16_t type;
  std::vector<uint8_t> payload;
};

class Reader {
 public:
  explicit Reader(const std::string &path) {
    EXPECT_EQ(uscope_reader_open(&r_, path.c_str()), USCOPE_OK) << uscope_last_error();
  }
  ~Reader() { uscope_reader_close(r_); }
  uscope_reader_t *get() const { return r_; }
  bool ok() const { return r_ != nullptr; }

  std::string dut(const char *key) const {
    const char *v = nullptr;
    return uscope_reader_dut_lookup(r_, &v, key) == USCOPE_OK ? v : "<absent>";
  }
  int storage(const char *name) const {
    uint16_t id = 0;
    return uscope_reader_find_storage(r_, &id, name) == USCOPE_OK ? id : -1;
  }
  int event(const char *name) const {
    uint16_t id = 0;
    return uscope_reader_find_event(r_, &id, name) == USCOPE_OK ? id : -1;
  }
  uscope_field_info_t field(uint16_t storage, uint16_t index, bool property = false) const {
    uscope_field_info_t f{};
    EXPECT_EQ(uscope_reader_storage_field(r_, &f, storage, index, property ? 1 : 0), USCOPE_OK);
    return f;
  }
  uscope_storage_info_t storage_info(uint16_t id) const {
    uscope_storage_info_t s{};
    EXPECT_EQ(uscope_reader_storage(r_, &s, id), USCOPE_OK);
    return s;
  }
  // A slot field at time t (UINT64_MAX if the call fails).
  uint64_t slot(uint64_t t, uint16_t storage, uint16_t slot, uint16_t field) const {
    uscope_state_t *st = nullptr;
    if (uscope_reader_state_at(r_, &st, t) != USCOPE_OK) return UINT64_MAX;
    uint64_t v = UINT64_MAX;
    if (uscope_state_slot_field(st, &v, storage, slot, field) != USCOPE_OK) v = UINT64_MAX;
    uscope_state_free(st);
    return v;
  }
  bool valid(uint64_t t, uint16_t storage, uint16_t slot) const {
    uscope_state_t *st = nullptr;
    if (uscope_reader_state_at(r_, &st, t) != USCOPE_OK) return false;
    int v = 0;
    EXPECT_EQ(uscope_state_slot_valid(st, &v, storage, slot), USCOPE_OK);
    uscope_state_free(st);
    return v != 0;
  }
  uint64_t prop(uint64_t t, uint16_t storage, uint16_t prop) const {
    uscope_state_t *st = nullptr;
    if (uscope_reader_state_at(r_, &st, t) != USCOPE_OK) return UINT64_MAX;
    uint64_t v = UINT64_MAX;
    if (uscope_state_property(st, &v, storage, prop) != USCOPE_OK) v = UINT64_MAX;
    uscope_state_free(st);
    return v;
  }
  std::vector<Event> events() const {
    std::vector<Event> out;
    uscope_event_iter_t *it = nullptr;
    EXPECT_EQ(uscope_reader_events_in_range(r_, &it, 0, UINT64_MAX), USCOPE_OK);
    uscope_event_t ev{};
    while (it && uscope_event_iter_next(it, &ev) == USCOPE_OK)
      out.push_back({ev.time_ps, ev.event_type_id, std::vector<uint8_t>(ev.payload, ev.payload + ev.payload_size)});
    uscope_event_iter_free(it);
    return out;
  }
  // Distinct times of the ops and events of every segment.
  std::vector<uint64_t> item_times() const {
    std::vector<uint64_t> out;
    uscope_file_info_t info{};
    info.struct_size = sizeof info;
    EXPECT_EQ(uscope_reader_info(r_, &info), USCOPE_OK);
    for (uint32_t s = 0; s < info.num_segments; ++s) {
      uscope_item_iter_t *it = nullptr;
      if (uscope_reader_segment_items(r_, &it, s) != USCOPE_OK) continue;
      uscope_item_t item{};
      while (uscope_item_iter_next(it, &item) == USCOPE_OK)
        if (out.empty() || out.back() != item.time_ps) out.push_back(item.time_ps);
      uscope_item_iter_free(it);
    }
    return out;
  }

 private:
  uscope_reader_t *r_ = nullptr;
};

inline std::vector<uint8_t> le(uint64_t v, int n) {
  std::vector<uint8_t> out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  return out;
}
inline std::vector<uint8_t> cat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto &p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace dpitest
