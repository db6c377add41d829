#include "simulator/io/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "simulator/io/command_files.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::io {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string human_bytes(uint64_t n) {
  if (n >= kMiB && n % kMiB == 0) return std::to_string(n / kMiB) + " MiB";
  return std::to_string(n) + " bytes";
}

}  // namespace

int open_input_file(const std::string& path, const std::string& what) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected just below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw ConfigError(path + ": " + what + ": cannot read (" + std::strerror(errno) + "); check the path");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = ::fstat(fd, &st) == 0 ? kind_of(st.st_mode) : std::string(std::strerror(errno));
    ::close(fd);
    throw ConfigError(path + ": " + what + ": cannot read " + kind + "; check the path (name a regular file)");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  try {
    note_input(fd, path, what);  // no output of the command may replace it
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

std::string read_input_file(const std::string& path, const std::string& what, uint64_t max_bytes) {
  const int fd = open_input_file(path, what);
  struct stat st {};
  ::fstat(fd, &st);
  const auto too_big = [&] {
    ::close(fd);
    throw ConfigError(path + ": " + what + ": larger than the " + human_bytes(max_bytes) +
                      " stepsim reads (a bigger file would exhaust memory); check the path");
  };
  if (uint64_t(st.st_size) > max_bytes) too_big();
  std::string text;
  text.reserve(size_t(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = std::strerror(errno);
      ::close(fd);
      throw ConfigError(path + ": " + what + ": cannot read (" + err + "); check the path");
    }
    text.append(buf, size_t(n));
    if (text.size() > max_bytes) too_big();  // grew while being read
  }
  ::close(fd);
  return text;
}

}  // namespace stepsim::io
