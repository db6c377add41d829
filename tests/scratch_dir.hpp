// A private scratch directory per use: created with mkdtemp (a fresh name no other process or
// checkout can hold, and no planted symlink can stand in for), removed with everything in it when
// it goes out of scope. Every test that writes a file writes it inside one of these.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace stepsim::test {

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "stepsim-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << tmpl;
    dir_ = tmpl;
  }
  ~ScratchDir() {
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
  std::filesystem::path dir_;
};

// One scratch directory for the whole test process (removed at exit), for helpers that outlive a
// single test's scope.
inline const ScratchDir& process_scratch() {
  static const ScratchDir dir;
  return dir;
}

}  // namespace stepsim::test
