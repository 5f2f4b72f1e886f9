// Checked number parsing, the one parser of numbers typed by people (CLI options, the DPI
// bridge's option strings and JSON-less schema specs). std::strtoull and friends wrap "-5"
// into a huge value, take "010" as octal and stop silently at junk; these say what was wrong.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace uscope {

// A whole number from 0 to max, nothing before or after it: decimal, or hexadecimal after
// "0x" when hex_ok. Returns "" when text is one (stored in *out), else the reason, as
// "expected a whole number from 0 to MAX, got "TEXT" (WHY)".
inline std::string parse_number(std::string_view text, uint64_t max, uint64_t *out, bool hex_ok = false) {
  const std::string got = "got \"" + std::string(text) + "\"";
  const std::string want = "expected a whole number from 0 to " + std::to_string(max);
  if (text.empty()) return want + ", got an empty value";
  if (text[0] == '-') return want + ", " + got + " (negative)";
  int base = 10;
  std::string_view digits = text;
  if (hex_ok && text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  uint64_t v = 0;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (r.ec == std::errc::result_out_of_range) return want + ", " + got + " (too large)";
  if (r.ec != std::errc() || r.ptr == digits.data())
    return want + ", " + got + (base == 16 ? " (not a hexadecimal number)" : " (not a decimal number)");
  if (r.ptr != digits.data() + digits.size())
    return want + ", " + got + " (\"" + std::string(r.ptr, digits.data() + digits.size()) + "\" after the number)";
  if (v > max) return want + ", " + got + " (too large)";
  *out = v;
  return {};
}

// A finite decimal number ("65.54", "1e3"), nothing before or after it. Returns "" or the
// reason.
inline std::string parse_real(std::string_view text, double *out) {
  const std::string got = "got \"" + std::string(text) + "\"";
  if (text.empty()) return "expected a number, got an empty value";
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr == text.data()) return "expected a number, " + got;
  if (r.ptr != text.data() + text.size())
    return "expected a number, " + got + " (\"" + std::string(r.ptr, text.data() + text.size()) + "\" after it)";
  if (!(v == v) || v - v != 0) return "expected a finite number, " + got;
  *out = v;
  return {};
}

}  // namespace uscope
