// Helpers shared by the config tests: paths into the source tree, the default config's text, and
// a check that a load fails with one ConfigError line naming the source, the key and a fix.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "../scratch_dir.hpp"
#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"

namespace stepsim::test {

inline std::string source_path(const std::string& rel) { return std::string(STEPSIM_SOURCE_DIR) + "/" + rel; }
inline std::string default_yaml() { return source_path("workloads/deepseek-v3.yaml"); }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string default_text() { return read_text(default_yaml()); }

// `text` with the first `from` replaced by `to`; fails the test if `from` is absent.
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "test setup: \"" << from << "\" not in the text";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// A scratch file, unique per test process (ctest runs tests in parallel), removed at scope end.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& content) : path_(dir_.write(name, content)) {}
  const std::string& path() const { return path_; }

 private:
  ScratchDir dir_;  // removed with the file
  std::string path_;
};

// Runs `load`, expects a ConfigError, and returns its message ("" if none was thrown).
inline std::string config_error_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const ConfigError& e) {
    if (std::getenv("STEPSIM_PRINT_ERRORS")) std::printf("    message: %s\n", e.what());
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ConfigError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected ConfigError, but the input was accepted";
  return "";
}

// The message is one line and contains every piece (source, key, fix hint...).
inline void expect_message(const std::string& msg, std::initializer_list<std::string> pieces) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "message spans lines: " << msg;
  for (const auto& piece : pieces)
    EXPECT_NE(msg.find(piece), std::string::npos) << "message lacks \"" << piece << "\": " << msg;
}

// Loads the default config with `sets`; expects a ConfigError containing every piece.
inline std::string expect_default_rejects(const std::vector<std::string>& sets,
                                          std::initializer_list<std::string> pieces) {
  const auto msg = config_error_of([&] { load_plan(default_yaml(), sets); });
  expect_message(msg, pieces);
  return msg;
}

// Loads `text` under the name `source`; expects a ConfigError containing every piece.
inline std::string expect_text_rejects(const std::string& text, const std::string& source,
                                       std::initializer_list<std::string> pieces,
                                       const std::vector<std::string>& sets = {}) {
  const auto msg = config_error_of([&] { load_plan_from_string(text, source, sets); });
  expect_message(msg, pieces);
  return msg;
}

}  // namespace stepsim::test
