// The list of simulate-report fields a sweep may plot (simulator/report/report_fields.hpp) against
// real reports: every scalar a report writes is listed with its type, and every listed field is
// written by one of these plans (MoE and dense models, uneven routing, a straggler, ZeRO-3, the
// synthetic workload). A field added, renamed or retyped in the report code fails here.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "simulator/report/report_fields.hpp"
#include "tests/cli_runner.hpp"

namespace {

using stepsim::ReportField;

void flatten(const std::string& prefix, const nlohmann::json& j, std::map<std::string, nlohmann::json>& out) {
  for (const auto& [k, v] : j.items()) {
    const std::string name = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object()) flatten(name, v, out);
    else if (!v.is_array()) out[name] = v;
  }
}

const std::string kSmall =
    " --set model.num_hidden_layers=8 --set cluster.nodes=4 --set parallel.pp=2 --set parallel.ep=16"
    " --set train.global_batch=64 --set parallel.microbatches=4";

TEST(ReportFields, TheListIsExactlyWhatReportsWrite) {
  const std::vector<std::string> plans = {
      kSmall,
      kSmall + " --set scenario.routing=zipf",
      kSmall + " --set 'scenario.stragglers=[{gpu: 5, clock: 0.8}]'",
      kSmall + " --set schedule=fsdp --set parallel.pp=1 --set parallel.zero=3 --set parallel.microbatches=2"
               " --set parallel.split_lone_chunks=false",
      " workloads/llama-3.1-8b.yaml",
      " --set workload.kind=synthetic --set parallel.pp=4 --set parallel.microbatches=8"};
  std::set<std::string> seen;
  for (const auto& plan : plans) {
    const auto r = stepsim::test::run_stepsim("simulate --json --quiet" + plan);
    ASSERT_EQ(r.code, 0) << plan << "\n" << r.err;
    std::map<std::string, nlohmann::json> fields;
    flatten("", nlohmann::json::parse(r.out), fields);
    for (const auto& [name, v] : fields) {
      // Not in sweep.csv (the wall time, this machine's path of the config) / absent parts.
      if (name == "sim.wall_s" || name == "config" ||
          ((name == "memory" || name == "roofline" || name == "compute_breakdown") && v.is_null()))
        continue;
      const ReportField* f = stepsim::find_report_field(name);
      ASSERT_NE(f, nullptr) << name << " is written by the report but not listed in simulator/report/report_fields.cpp";
      seen.insert(name);
      if (v.is_null()) continue;  // a number or text that does not apply to this plan
      const auto kind = v.is_boolean() ? ReportField::Kind::Flag
                        : v.is_string() ? ReportField::Kind::Text
                                        : ReportField::Kind::Number;
      EXPECT_EQ(int(f->kind), int(kind)) << name;
    }
  }
  for (const ReportField& f : stepsim::simulate_report_fields())
    EXPECT_TRUE(seen.count(f.name)) << f.name << " is listed but no report wrote it";
}

TEST(ReportFields, ClosestNamesForAMisspelling) {
  EXPECT_EQ(stepsim::closest_report_fields("step_tme_s", 1).front(), "step_time_s");
  EXPECT_EQ(stepsim::closest_report_fields("roofline.bubble", 1).front(), "roofline.bubble_s");
  EXPECT_EQ(stepsim::find_report_field("memory.fits")->kind, ReportField::Kind::Flag);
  EXPECT_EQ(stepsim::find_report_field("sim.wall_s"), nullptr);  // left out of sweep.csv
  EXPECT_EQ(stepsim::find_report_field("config"), nullptr);
}

}  // namespace
