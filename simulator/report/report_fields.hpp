// The scalar fields of `stepsim simulate --json`, flattened with dots as sweep.csv names its
// columns (nested objects joined, arrays, sim.wall_s and config left out). What a sweep can chart with
// --plot-y is known here, before any point runs. The JSON is written by sim_json, memory_json,
// stragglers_json, routing_json and roofline_json; tests/sweep/report_fields_test.cpp runs real
// reports and fails when they and this list part ways (a field added, renamed or retyped).
#pragma once

#include <string>
#include <vector>

namespace stepsim {

struct ReportField {
  enum class Kind { Number, Flag, Text };  // Flag: true / false
  const char* name;
  Kind kind;
};

// Every field any simulate report may hold (some only for some plans: routing.* for MoE models,
// roofline.* for model workloads, roofline.fsdp_per_microbatch_s for ZeRO-3, ...), in name order.
const std::vector<ReportField>& simulate_report_fields();

// The field of that name, or nullptr.
const ReportField* find_report_field(const std::string& name);

// The known field names closest to `name` (edit distance), at most `max` of them, for messages.
std::vector<std::string> closest_report_fields(const std::string& name, size_t max = 3);

}  // namespace stepsim
