#include "simulator/io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "simulator/io/command_files.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::io {
namespace {

namespace fs = std::filesystem;

std::string reason(int err) { return err ? std::strerror(err) : "write failed"; }

// The temporary files being written. A SIGINT or SIGTERM (Ctrl-C, a batch system's time limit)
// removes them, then ends the process as the signal would have; the targets stay as they were.
constexpr size_t kTempSlots = 32;
std::atomic<const char*> g_temps[kTempSlots];

void remove_temps_and_end(int sig) {
  for (auto& slot : g_temps)
    if (const char* p = slot.load()) ::unlink(p);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Installed once, and only where the signal would end the process anyway: a signal the caller
// ignores (a background job's SIGINT) or handles stays theirs.
void remove_temps_on_signals() {
  static const bool installed = [] {
    for (const int sig : {SIGINT, SIGTERM}) {
      struct sigaction old {};
      ::sigaction(sig, nullptr, &old);
      if (old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_temps_and_end;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
    return true;
  }();
  (void)installed;
}

void track_temp(const char* path) {
  remove_temps_on_signals();
  for (auto& slot : g_temps) {
    const char* none = nullptr;
    if (slot.compare_exchange_strong(none, path)) return;
  }
}

void untrack_temp(const char* path) {
  for (auto& slot : g_temps) {
    const char* mine = path;
    if (slot.compare_exchange_strong(mine, nullptr)) return;
  }
}

}  // namespace

namespace {

// What a path names once its symbolic links are followed, link by link (the file a write
// replaces): a link to a file not there yet names that file, so its folder is checked as any
// output's; a loop is refused. (weakly_canonical stops at a dangling link and returns the link
// itself, which the rename then replaced with a plain file.)
fs::path followed_path(const std::string& path, const std::string& option) {
  std::error_code ec;
  fs::path target = path;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
    if (hops == 40)
      throw ConfigError(path + ": a loop of symbolic links (or over 40 in a row); name a file to write (" + option + ")");
    const fs::path next = fs::read_symlink(target, ec);
    if (ec)
      throw ConfigError(path + ": cannot read the symbolic link (" + ec.message() + "); check the path (" + option + ")");
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return target;
}

}  // namespace

// The checks of check_output_path; returns the file a write replaces (a symlink followed), or `-`.
fs::path checked_target(const std::string& path, const std::string& option, Dash dash) {
  if (path.empty()) throw ConfigError(option + ": empty path; name the file to write");
  if (is_stdout(path)) {
    if (dash.refusal == nullptr) return path;
    throw ConfigError(option + " -: " + dash.refusal + ", so - cannot mean stdout here; name a file (./- for a file "
                      "named -)");
  }
  const fs::path target = followed_path(path, option);
  claim_output(path, option);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw ConfigError(path + ": is a directory; name a file to write (" + option + ")");
    if (!S_ISREG(st.st_mode)) return target;  // a device, FIFO or socket: written directly
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw ConfigError(path + ": cannot write there (" + reason(errno) + "); check that its folder exists and is writable (" +
                      option + ")");
  return target;
}

void check_output_path(const std::string& path, const std::string& option, Dash dash) {
  (void)checked_target(path, option, dash);
}

OutputFile::OutputFile(const std::string& path, const std::string& option, Dash dash) : path_(path), option_(option) {
  const fs::path target = checked_target(path, option, dash);
  if (is_stdout(path)) {
    out_ = &std::cout;
    return;
  }
  target_ = target.string();
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {  // a device, FIFO or socket: no temporary file can stand in for it
      file_.open(target_, std::ios::binary);
      if (!file_) throw ConfigError(path + ": cannot write (" + reason(errno) + "); check the path (" + option + ")");
      return;
    }
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // The temporary name must stay within the 255 bytes of a file name even when the target's does.
  const std::string stem = target.filename().string().substr(0, 200);
  std::string tmpl = (dir / ("." + stem + ".stepsim-XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw ConfigError(path + ": cannot write there (" + reason(errno) + "); check that its folder exists and is writable (" +
                      option + ")");
  // mkstemp makes the file private; give it the mode a plain open would (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  temp_ = tmpl;
  track_temp(temp_.c_str());
  file_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!file_) {
    untrack_temp(temp_.c_str());
    ::unlink(temp_.c_str());
    throw ConfigError(path + ": cannot write (" + reason(errno) + "); check the path (" + option + ")");
  }
}

OutputFile::~OutputFile() {
  if (!committed_ && !temp_.empty()) {
    file_.close();
    ::unlink(temp_.c_str());
  }
  if (!temp_.empty()) untrack_temp(temp_.c_str());
}

void OutputFile::commit() {
  if (out_ == &std::cout) {
    finish_stdout();
    committed_ = true;
    return;
  }
  file_.flush();  // errno still holds the cause when an earlier buffered write failed
  const int flush_err = errno;
  if (!file_) throw ConfigError(path_ + ": cannot write (" + reason(flush_err) + "); nothing was written (" + option_ + ")");
  file_.close();
  if (file_.fail()) throw ConfigError(path_ + ": cannot write (" + reason(errno) + "); nothing was written (" + option_ + ")");
  if (!temp_.empty() && std::rename(temp_.c_str(), target_.c_str()) != 0)
    throw ConfigError(path_ + ": cannot replace the file (" + reason(errno) + "); check the path (" + option_ + ")");
  output_written(path_);
  committed_ = true;
}

void write_output_file(const std::string& path, const std::string& option, Dash dash, const std::string& content) {
  OutputFile f(path, option, dash);
  f.stream() << content;
  f.commit();
}

void finish_stdout() {
  errno = 0;
  std::cout.flush();
  const bool bad = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (bad) {
    const int err = errno;
    std::clearerr(stdout);
    throw ConfigError(std::string("stdout: cannot write the report (") + reason(err) + "); check where stdout goes");
  }
}

}  // namespace stepsim::io
