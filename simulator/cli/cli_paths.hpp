// Paths the commands hand to child processes and manifests: absolute, so they mean the same file
// from any working directory.
#pragma once

#include <filesystem>
#include <string>

namespace stepsim::cli {

inline std::string absolute_path(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

}  // namespace stepsim::cli
