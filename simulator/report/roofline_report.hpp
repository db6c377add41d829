// Renders a Roofline as the JSON object of `stepsim roofline --json` (keys documented in the
// README) and as the readable table printed by default.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vocabulary/plan.hpp"
#include "simulator/roofline/roofline.hpp"

namespace stepsim {

nlohmann::json roofline_json(const Plan& plan, const Roofline& r);
// What a report was computed from: `config` (the file), `sets` (the --set texts, in order) and
// `notes` (settings a higher layer overrode, as printed on stderr), so a saved report -- a sweep
// point's above all -- says what it ran with.
// `software` too: the framework release the plan forecasts (software.profile and its fields).
void add_plan_inputs(nlohmann::json& j, const Plan& plan);
// The software profile as the reports print it: the release, its launch costs, CUDA graphs and
// fused kernels, in one line.
std::string software_text(const Plan& plan);
// The attention core's assumed rates for the reports: the BF16 ones, or under train.fp8_attention
// the FP8 format's (and whether its backward skips a sliding window's outside tiles).
std::string attention_rates_text(const Plan& plan);
// "TP t, CP c, " for the reports' plan line (empty without TP or CP), saying when KV heads are
// replicated over TP.
std::string tp_cp_text(const Plan& plan);
std::string roofline_text(const Plan& plan, const Roofline& r);

}  // namespace stepsim
