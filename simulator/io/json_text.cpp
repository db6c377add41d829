#include "simulator/io/json_text.hpp"

namespace stepsim::io {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if none starts there.
size_t utf8_sequence_at(const std::string& s, size_t i) {
  const size_t n = s.size();
  const auto c = static_cast<unsigned char>(s[i]);
  const size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > n) return 0;
  uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < len; ++k) {
    const auto d = static_cast<unsigned char>(s[i + k]);
    if ((d >> 6) != 0x2) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

}  // namespace

bool is_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_sequence_at(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string shortened(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max > 3 ? max - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // a character's first byte
  return s.substr(0, cut) + "...";
}

std::string printable(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_sequence_at(s, i);
    if (len == 0) {
      const auto c = static_cast<unsigned char>(s[i++]);
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else if (len == 1 && (static_cast<unsigned char>(s[i]) < 0x20 || s[i] == 0x7f)) {
      out += ' ';
      ++i;
    } else {
      out.append(s, i, len);
      i += len;
    }
  }
  return out;
}

}  // namespace stepsim::io
