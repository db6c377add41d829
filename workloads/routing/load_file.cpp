#include "workloads/routing/load_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "vocabulary/config_error.hpp"
#include "simulator/io/input_file.hpp"
#include "simulator/io/strict_json.hpp"

namespace stepsim {

namespace {

using Histogram = std::map<int64_t, std::vector<double>>;  // layer -> tokens per expert (NaN = unset)

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw ConfigError(path + ": scenario.load_file: " + what);
}

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// Reads the whole of `s` into `out` with `convert` (std::stoll, std::stod): no trailing text, no overflow.
template <class T, class Convert>
bool parse_whole(const std::string& s, T& out, Convert convert) {
  size_t used = 0;
  try {
    out = convert(s, &used);
  } catch (...) {
    return false;
  }
  return used == s.size();
}

bool parse_int(const std::string& s, int64_t& out) {
  return parse_whole(s, out, [](const std::string& t, size_t* used) { return std::stoll(t, used); });
}

bool parse_number(const std::string& s, double& out) {
  return parse_whole(s, out, [](const std::string& t, size_t* used) { return std::stod(t, used); }) &&
         std::isfinite(out);
}

// A layer the file may list: an MoE layer of the model.
void check_layer(const Plan& plan, const std::string& path, const std::string& where, int64_t layer) {
  const ModelConfig& m = plan.model;
  if (layer < m.first_k_dense_replace || layer >= m.num_hidden_layers)
    fail(path, where + "layer " + std::to_string(layer) + " is not an MoE layer of the model (those are " +
                   std::to_string(m.first_k_dense_replace) + ".." + std::to_string(m.num_hidden_layers - 1) + ")");
}

Histogram read_csv(const Plan& plan, const std::string& path, std::istream& in) {
  const int64_t experts = plan.model.n_routed_experts;
  Histogram h;
  std::string line;
  int64_t n = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++n;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const std::string where = "line " + std::to_string(n) + ": ";
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(trim(c));
    if (!header) {
      if (cells != std::vector<std::string>{"layer", "expert", "tokens"})
        fail(path, where + "expected the header layer,expert,tokens");
      header = true;
      continue;
    }
    int64_t layer = 0, expert = 0;
    double tokens = 0;
    if (cells.size() != 3 || !parse_int(cells[0], layer) || !parse_int(cells[1], expert) ||
        !parse_number(cells[2], tokens))
      fail(path, where + "expected layer,expert,tokens (two integers and a number), got \"" + line + "\"");
    check_layer(plan, path, where, layer);
    if (expert < 0 || expert >= experts)
      fail(path, where + "expert " + std::to_string(expert) + " is out of range 0.." + std::to_string(experts - 1));
    if (tokens < 0) fail(path, where + "tokens must not be negative");
    auto& row = h.try_emplace(layer, size_t(experts), std::nan("")).first->second;
    if (!std::isnan(row[size_t(expert)]))
      fail(path, where + "layer " + std::to_string(layer) + " expert " + std::to_string(expert) + " is listed twice");
    row[size_t(expert)] = tokens;
  }
  if (!header) fail(path, "empty file; expected the header layer,expert,tokens and one row per layer and expert");
  return h;
}

Histogram read_json(const Plan& plan, const std::string& path, std::istream& in) {
  const int64_t experts = plan.model.n_routed_experts;
  nlohmann::json j;
  try {
    j = io::parse_json_strictly(in, 64);
  } catch (const nlohmann::json::exception& e) {  // parse errors and number overflow (1e3068)
    fail(path, std::string("not valid JSON (") + e.what() + ")");
  } catch (const ConfigError& e) {  // a layer given twice, deep nesting
    fail(path, e.what());
  }
  if (!j.is_object() || !j.contains("layers") || !j["layers"].is_object())
    fail(path, "expected {\"layers\": {\"LAYER\": [tokens per expert, ...], ...}}");
  Histogram h;
  for (const auto& [key, tokens] : j["layers"].items()) {
    int64_t layer = 0;
    if (!parse_int(key, layer)) fail(path, "layers: key \"" + key + "\" is not a layer index");
    check_layer(plan, path, "", layer);
    const std::string where = "layer " + key + ": ";
    if (!tokens.is_array() || int64_t(tokens.size()) != experts)
      fail(path, where + "expected an array of " + std::to_string(experts) + " token counts, one per expert");
    auto& row = h[layer];
    for (const auto& t : tokens) {
      if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() < 0)
        fail(path, where + "token counts must be finite numbers >= 0, got " + t.dump());
      row.push_back(t.get<double>());
    }
  }
  return h;
}

}  // namespace

std::vector<std::vector<double>> read_load_file(const Plan& plan) {
  const std::string& path = plan.scenario.load_file;
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".csv" && ext != ".json") fail(path, "unknown format; name the file .csv or .json");
  std::istringstream in(io::read_input_file(path, "scenario.load_file", 64 * io::kMiB));
  const Histogram h = ext == ".csv" ? read_csv(plan, path, in) : read_json(plan, path, in);
  const ModelConfig& m = plan.model;
  std::vector<std::vector<double>> shares;
  for (int64_t layer = m.first_k_dense_replace; layer < m.num_hidden_layers; ++layer) {
    const auto it = h.find(layer);
    const std::string where = "layer " + std::to_string(layer) + ": ";
    if (it == h.end()) fail(path, where + "missing; list every MoE layer");
    // Shares are scaled by the largest count first, so counts near the double range (1e308) sum
    // to a finite number instead of inf (which would make every share 0).
    double largest = 0;
    for (size_t e = 0; e < it->second.size(); ++e) {
      if (std::isnan(it->second[e])) fail(path, where + "expert " + std::to_string(e) + " is missing");
      largest = std::max(largest, it->second[e]);
    }
    if (largest <= 0) fail(path, where + "no tokens; a layer needs at least one");
    std::vector<double> row = it->second;
    double sum = 0;
    for (double& x : row) sum += (x /= largest);
    for (double& x : row) x /= sum;
    shares.push_back(std::move(row));
  }
  return shares;
}

}  // namespace stepsim
