// A private scratch directory per use: created with mkdtemp (a fresh name no other process or
// checkout can hold, and no planted symlink can stand in for), removed with everything in it when
// it goes out of scope -- by the process that made it, never by a forked child that inherited it.
// Every test that writes a file writes it inside one of these.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace stepsim::test {

class ScratchDir {
 public:
  ScratchDir() : owner_(::getpid()) {
    std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "stepsim-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << tmpl;
    dir_ = tmpl;
  }
  ~ScratchDir() {
    if (::getpid() != owner_) return;  // a child ending normally leaves its parent's directory alone
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return dir_; }
  // A path inside the directory (nothing is created).
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  // Writes `content` to `name` inside the directory and returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    const std::string p = file(name);
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  pid_t owner_;
  std::filesystem::path dir_;
};

// One scratch directory for the whole test process (removed at exit), for helpers that outlive a
// single test's scope. Made before main() runs, so a forked child (which ends with _exit, skipping
// destructors) uses its parent's instead of making one nobody removes: the platform tests' XML
// files, written in children, once left an empty stepsim-test-* folder per test in TMPDIR.
inline const ScratchDir& process_scratch() {
  static const ScratchDir dir;
  return dir;
}
inline const ScratchDir& made_before_main = process_scratch();

}  // namespace stepsim::test
