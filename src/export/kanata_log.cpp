#include "export/kanata_log.hpp"

#include <charconv>
#include <cstring>

namespace uscope::exporter::kanata {

namespace {

// The commands: name, numeric arguments before the text, whether a text
// argument follows them, and how many numeric arguments may be left out
// (W's TYPE: the reference's konata2uscope reads a missing one as 0).
struct Def {
  std::string_view name;
  Cmd cmd;
  uint8_t numbers;
  bool text;
  uint8_t optional;
};

constexpr Def kTable[] = {
    {"Kanata", Cmd::Header, 0, true, 0},  //
    {"C=", Cmd::CycleAbs, 1, false, 0},   //
    {"C", Cmd::CycleDelta, 1, false, 0},  //
    {"I", Cmd::Insn, 3, false, 0},        //
    {"L", Cmd::Label, 2, true, 0},        //
    {"S", Cmd::Start, 2, true, 0},        //
    {"E", Cmd::End, 2, true, 0},          //
    {"R", Cmd::Retire, 3, false, 0},      //
    {"W", Cmd::Wake, 3, false, 1},        //
};

const Def &def_of(Cmd c) { return kTable[static_cast<size_t>(c)]; }

// The table's entry of a command name: by its first letter, since this runs
// once per line.
const Def *find_def(std::string_view n) {
  if (n.size() == 1) {
    switch (n[0]) {
      case 'C': return &def_of(Cmd::CycleDelta);
      case 'I': return &def_of(Cmd::Insn);
      case 'L': return &def_of(Cmd::Label);
      case 'S': return &def_of(Cmd::Start);
      case 'E': return &def_of(Cmd::End);
      case 'R': return &def_of(Cmd::Retire);
      case 'W': return &def_of(Cmd::Wake);
      default: return nullptr;
    }
  }
  for (const Def &k : kTable)
    if (k.name == n) return &k;
  return nullptr;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// A decimal number (Konata's parser also trims the field).
bool parse_u64(std::string_view s, uint64_t *out) {
  s = trim(s);
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    const uint64_t d = static_cast<uint64_t>(ch - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

}  // namespace

std::string_view name_of(Cmd c) { return def_of(c).name; }

Parse parse_line(std::string_view line, Command *out, std::string *reason) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (trim(line).empty() || line.front() == '#') return Parse::Ignore;
  // A NUL byte is no text: a stage name or label holding one would reach the
  // trace cut short (its strings are NUL-terminated) and could then repeat
  // another name (fuzz_konata finding).
  if (line.find('\0') != std::string_view::npos) {
    *reason = "a NUL byte in the line";
    return Parse::Bad;
  }
  // Fields: at most 4 are read (command, up to 3 arguments); a fifth and
  // later ones are ignored, as Konata and konata2uscope do.
  std::string_view f[4];
  size_t nf = 0, pos = 0;
  while (nf < 4) {
    const size_t tab = line.find('\t', pos);
    f[nf++] = line.substr(pos, tab == std::string_view::npos ? std::string_view::npos : tab - pos);
    if (tab == std::string_view::npos) break;
    pos = tab + 1;
  }
  const Def *d = find_def(f[0]);
  if (!d) {
    *reason = "unknown command \"" + std::string(f[0].substr(0, 40)) + "\"";
    return Parse::Bad;
  }
  *out = Command{};
  out->cmd = d->cmd;
  uint64_t *num[3] = {&out->a, &out->b, &out->c};
  static const char *const kArg[3] = {"first", "second", "third"};
  for (size_t i = 0; i < d->numbers; ++i) {
    if (1 + i >= nf) {
      if (i + d->optional >= d->numbers) break;
      *reason = std::string(d->name) + ": missing " + kArg[i] + " argument";
      return Parse::Bad;
    }
    if (!parse_u64(f[1 + i], num[i])) {
      *reason = std::string(d->name) + ": " + kArg[i] + " argument \"" + std::string(f[1 + i].substr(0, 40)) +
                "\" is not a decimal number";
      return Parse::Bad;
    }
  }
  if (d->text) {
    const size_t ti = 1 + d->numbers;
    if (ti >= nf) {
      // L's text may be empty (konata2uscope reads a missing one as "");
      // a stage needs a name, the header a version.
      if (d->cmd != Cmd::Label) {
        *reason = std::string(d->name) + (d->cmd == Cmd::Header ? ": missing version" : ": missing stage name");
        return Parse::Bad;
      }
    } else {
      out->text = d->cmd == Cmd::Label ? f[ti] : trim(f[ti]);
      if (out->text.empty() && (d->cmd == Cmd::Start || d->cmd == Cmd::End)) {
        *reason = std::string(d->name) + ": empty stage name";
        return Parse::Bad;
      }
    }
  }
  return Parse::Ok;
}

char *format_line(char *p, const Command &c, IdDecimals *ids) {
  const Def &d = def_of(c.cmd);
  for (char ch : d.name) *p++ = ch;  // a few letters: no memcpy call
  const uint64_t num[3] = {c.a, c.b, c.c};
  const bool id_first = ids && c.cmd != Cmd::CycleAbs && c.cmd != Cmd::CycleDelta;
  for (size_t i = 0; i < d.numbers; ++i) {
    *p++ = '\t';
    p = i == 0 && id_first ? ids->put(p, num[0]) : std::to_chars(p, p + 20, num[i]).ptr;
  }
  if (d.text) {
    *p++ = '\t';
    const size_t n = c.text.size();
    if (n) std::memcpy(p, c.text.data(), n);
    // A tab or newline would end the field or the line: Konata's reader
    // splits on both, so they are written as spaces. Labels hold neither,
    // nearly always: 8 bytes at a time are checked for a byte below 0x0E
    // (the bit trick of "has a byte less than n"), and only those looked at.
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (((w - kOnes * 0x0E) & ~w & kHighs) == 0) continue;
      for (size_t k = i; k < i + 8; ++k)
        if (p[k] == '\t' || p[k] == '\n' || p[k] == '\r') p[k] = ' ';
    }
    for (; i < n; ++i)
      if (p[i] == '\t' || p[i] == '\n' || p[i] == '\r') p[i] = ' ';
    p += n;
  }
  *p++ = '\n';
  return p;
}

void append_line(std::string &out, const Command &c) {
  const size_t at = out.size();
  out.resize(at + max_line_size(c));
  out.resize(static_cast<size_t>(format_line(out.data() + at, c) - out.data()));
}

}  // namespace uscope::exporter::kanata
