// The Kanata log format, version 0004 (Konata's docs/kanata-log-format.md):
// one table of its commands and their arguments, a line parser and a line
// formatter, shared by the import (konata_import.cpp) and the export
// (konata.cpp) so that both sides speak exactly the same vocabulary.
//
// A log is tab-separated text, one command per line:
//   Kanata  VERSION                 header (first line)
//   C=      CYCLE                   absolute cycle
//   C       DELTA                   advance the cycle
//   I       ID  SIM_ID  THREAD_ID   start an instruction
//   L       ID  TYPE  TEXT          label: 0 label pane, 1 tooltip, 2 the last started stage
//   S       ID  LANE  STAGE         start a stage on a lane
//   E       ID  LANE  STAGE         end a stage (may be omitted)
//   R       ID  RETIRE_ID  TYPE     end the instruction: 0 retire, 1 flush
//   W       CONSUMER  PRODUCER TYPE dependency (0: wake-up)
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace uscope::exporter::kanata {

// The header's version (format doc "Header": "The current version is 4").
inline constexpr std::string_view kVersion = "0004";

enum class Cmd : uint8_t { Header, CycleAbs, CycleDelta, Insn, Label, Start, End, Retire, Wake };

// R's TYPE values (format doc "R").
inline constexpr uint32_t kRetire = 0;
inline constexpr uint32_t kFlush = 1;
// L's TYPE values (format doc "L").
inline constexpr uint32_t kLabelName = 0;
inline constexpr uint32_t kLabelDetail = 1;
inline constexpr uint32_t kLabelStage = 2;

// One command, its numeric arguments in order (a, b, c) and its text
// argument (the header's version, L's text, S/E's stage name), which views
// the parsed line.
struct Command {
  Cmd cmd = Cmd::Header;
  uint64_t a = 0, b = 0, c = 0;
  std::string_view text;
};

enum class Parse { Ok, Ignore, Bad };

// Parses one line (without its newline). Ignore: a blank line or a comment
// ('#'). Bad: *reason says why (an unknown command, a missing or
// non-numeric argument).
Parse parse_line(std::string_view line, Command *out, std::string *reason);

// Appends the line of a command (with its newline) to out.
void append_line(std::string &out, const Command &c);
// The decimals of recent ids: an instruction's id is on a dozen lines (I,
// L, each S and E, R) written while a few hundred others are in flight, so
// a small direct-mapped table formats each id about once.
class IdDecimals {
 public:
  // Writes v's decimal at p, which has room for 20 bytes; returns its end.
  char *put(char *p, uint64_t v) {
    Entry &e = table_[v & (kEntries - 1)];
    if (e.value != v) {
      e.len = static_cast<uint8_t>(std::to_chars(e.text, e.text + sizeof e.text, v).ptr - e.text);
      e.value = v;
    }
    std::memcpy(p, e.text, sizeof e.text);  // a fixed size: two moves, whatever the length
    return p + e.len;
  }

 private:
  static constexpr size_t kEntries = 256;
  struct Entry {
    uint64_t value = UINT64_MAX;  // no id: ids count from 0
    char text[20] = {};
    uint8_t len = 0;
  };
  Entry table_[kEntries];
};

// The same line written at p, which has room for max_line_size(c) bytes;
// returns its end. For the export's hot path (tens of millions of lines),
// with ids (the first number of every command but C= and C) through ids.
char *format_line(char *p, const Command &c, IdDecimals *ids = nullptr);
inline size_t max_line_size(const Command &c) { return 8 + 3 * 21 + 1 + c.text.size() + 1; }

// The command's name as it is written ("C=", "I", ...).
std::string_view name_of(Cmd c);

}  // namespace uscope::exporter::kanata
