// Every input file stepsim reads goes through here: it must be a regular file (not a directory,
// FIFO or device such as /dev/zero) no larger than a stated limit, so a wrong path is one clear
// error line instead of a hang or an exhausted memory.
#pragma once

#include <cstdint>
#include <string>

namespace stepsim::io {

inline constexpr uint64_t kMiB = uint64_t(1) << 20;

// Reads the whole file. `what` is the key or role that named it ("config", "scenario.load_file");
// a bad path, non-regular file or a file over `max_bytes` throws ConfigError "PATH: WHAT: ...".
std::string read_input_file(const std::string& path, const std::string& what, uint64_t max_bytes);

// Opens the file for streaming after the same checks (no size limit); returns a file descriptor
// the caller owns.
int open_input_file(const std::string& path, const std::string& what);

}  // namespace stepsim::io
