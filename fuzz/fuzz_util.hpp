// Shared by the libFuzzer targets: a private scratch folder per fuzzing process, and a way to hand
// the input to readers that take a path.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace stepsim::fuzz {

// Never destroyed: the exit handler that removes the folder runs after static destructors.
inline const std::string& scratch_dir() {
  static const std::string* dir = [] {
    auto* t = new std::string((std::filesystem::temp_directory_path() / "stepsim-fuzz-XXXXXX").string());
    if (!::mkdtemp(t->data())) std::abort();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*dir, ec);
    });
    return t;
  }();
  return *dir;
}

// Writes the input to `name` inside the scratch folder; returns its path.
inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  return path;
}

}  // namespace stepsim::fuzz
