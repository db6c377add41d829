// Shared by the importer tests: an imported plan written, checked and loaded as `stepsim simulate`
// would load it, and a check that an import is refused with one line.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/importers/importers.hpp"
#include "tests/config/config_test_util.hpp"

namespace stepsim::test {

// The YAML an import writes (model.config_json absolute), checked, and the Plan it loads to.
struct Loaded {
  importers::ImportedPlan imported;
  std::string yaml;
  Plan plan;
};

inline Loaded load_imported(importers::ImportedPlan imported) {
  Loaded l{std::move(imported), "", {}};
  l.yaml = importers::plan_yaml(l.imported, "");
  importers::check_imported_plan(l.imported, l.yaml, "");
  l.plan = load_plan_from_string(l.yaml, "imported.yaml");
  return l;
}

inline Loaded megatron(const std::string& text, int64_t gpus = 0) {
  importers::ImportOptions o;
  o.gpus = gpus;
  return load_imported(importers::import_megatron(text, "launch.sh", o));
}

inline Loaded torchtitan(const std::string& text, int64_t gpus) {
  importers::ImportOptions o;
  o.gpus = gpus;
  return load_imported(importers::import_torchtitan(text, "job.toml", o));
}

// The import (and the check of its plan) is refused with one line holding every piece.
inline std::string expect_import_rejects(const std::function<void()>& import, std::initializer_list<std::string> pieces) {
  const std::string msg = config_error_of(import);
  expect_message(msg, pieces);
  return msg;
}

inline bool mentions(const std::vector<std::string>& list, const std::string& piece) {
  for (const auto& x : list)
    if (x.find(piece) != std::string::npos) return true;
  return false;
}

}  // namespace stepsim::test
