// The communication-class and op-kind tables (vocabulary/comm_classes.hpp, op_kinds.hpp) and the
// JSON that loops over them: every per-class key of `simulate --json` comes from a table row.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "simulator/report/sim_report.hpp"
#include "simulator/roofline/roofline.hpp"
#include "tests/simulator/sim_test_util.hpp"
#include "vocabulary/op.hpp"

namespace stepsim::test {
namespace {

using ops::CommClass;
using ops::OpKind;

TEST(CommClassTable, EveryKindHasOneRowAndCommKindsAClassWithAStream) {
  std::set<std::string> names;
  for (size_t k = 0; k < size_t(OpKind::Count_); ++k) {
    const ops::OpKindInfo& row = ops::info(OpKind(k));
    EXPECT_TRUE(names.insert(row.name).second) << "two kinds named " << row.name;
    EXPECT_LT(size_t(row.comm_class), ops::kCommClasses) << row.name;
    if (row.comm_class != CommClass::None) {
      EXPECT_TRUE(ops::is_comm_kind(OpKind(k))) << row.name;
      EXPECT_STRNE(row.stream, "") << row.name;
    }
  }
  // The classes the JSON names, in their documented spelling.
  std::set<std::string> json;
  for (size_t c = 0; c < ops::kCommClasses; ++c)
    if (ops::comm_class_info(c).in_json) json.insert(ops::comm_class_info(c).name);
  EXPECT_EQ(json, (std::set<std::string>{"ep", "pp", "dp", "tp", "cp"}));
  EXPECT_EQ(ops::comm_class(OpKind::EpDispatch), CommClass::Ep);
  EXPECT_EQ(ops::comm_class(OpKind::PpRecv), CommClass::Pp);
  EXPECT_EQ(ops::comm_class(OpKind::FsdpReduceScatter), CommClass::Dp);
  EXPECT_EQ(ops::comm_class(OpKind::Attention), CommClass::None);
}

// A hand-made result: class c moved 10 + c seconds on every rank and exposed c (rank 0) and 3c
// (rank 1). Each class with JSON fields must show exactly those numbers under its own name.
TEST(CommClassTable, JsonKeysComeFromTheTable) {
  const Plan plan = load_plan(default_config_path());
  SimResult r;
  r.step_time_s = 100;
  for (int64_t g = 0; g < 2; ++g) {
    RankResult rank;
    rank.rank = g;
    rank.step_time_s = 100;
    for (size_t c = 0; c < ops::kCommClasses; ++c) {
      rank.comm_s[c] = 10.0 + double(c);
      rank.exposed_s[c] = double(c) * (g == 0 ? 1 : 3);
    }
    r.ranks.push_back(rank);
  }
  r.comm_s = r.ranks[0].comm_s;
  const nlohmann::json j = sim_json(plan, r, compute_roofline(plan));
  for (size_t c = 0; c < ops::kCommClasses; ++c) {
    const std::string name = ops::comm_class_info(c).name;
    if (!ops::comm_class_info(c).in_json) {
      EXPECT_FALSE(j.contains(name + "_comm_s")) << name;
      continue;
    }
    EXPECT_DOUBLE_EQ(j.at(name + "_comm_s").get<double>(), 10.0 + double(c)) << name;
    EXPECT_DOUBLE_EQ(j.at("exposed_by_kind").at(name + "_s").get<double>(), 2.0 * double(c)) << name;
    EXPECT_DOUBLE_EQ(j.at("ranks").at(1).at("exposed_" + name + "_s").get<double>(), 3.0 * double(c)) << name;
    EXPECT_DOUBLE_EQ(j.at("ranks").at(0).at(name + "_comm_s").get<double>(), 10.0 + double(c)) << name;
  }
}

}  // namespace
}  // namespace stepsim::test
