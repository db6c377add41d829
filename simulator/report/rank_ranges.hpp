// GPU ids written compactly ("0-7,64,256-263"), the way --trace-ranks reads them, so a report
// names thousands of GPUs on one line.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace stepsim {

inline std::string rank_ranges(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) out += '-' + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace stepsim
