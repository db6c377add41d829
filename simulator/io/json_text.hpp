// JSON text for output and messages. Names and paths may hold bytes that are not UTF-8 (a file
// name on Linux is any bytes); they are written with U+FFFD instead of aborting the report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace stepsim::io {

inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// True when `s` is valid UTF-8 (what a name in a JSON report must be).
bool is_utf8(const std::string& s);

// `s` as one line of valid UTF-8 for a message: each byte outside a valid UTF-8 sequence becomes
// \xNN (so a user can still see which bytes a name or value held) and each control character a space.
std::string printable(const std::string& s);

// `s` cut to at most `max` bytes for a message, ending in "..." when cut (on a character boundary).
std::string shortened(const std::string& s, size_t max);

}  // namespace stepsim::io
