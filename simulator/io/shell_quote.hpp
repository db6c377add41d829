// A word written so that POSIX sh reads it back unchanged: for command lines stepsim prints or
// writes (a sweep's job lines, the command that reproduces a report). Nothing stepsim runs goes
// through a shell.
#pragma once

#include <string>

namespace stepsim::io {

// Single-quoted when it holds anything but plainly safe characters; ' becomes '\''.
inline std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace stepsim::io
