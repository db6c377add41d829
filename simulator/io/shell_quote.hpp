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

// "cd FOLDER && ": the start of a command line that runs in `folder` wherever a shell starts it
// (a job line on a cluster node, a page's reproducing command), so the relative paths it names mean
// what they meant there. `folder` is absolute; a line break in it is the caller's to refuse.
inline std::string cd_prefix(const std::string& folder) { return "cd " + shell_quote(folder) + " && "; }

}  // namespace stepsim::io
