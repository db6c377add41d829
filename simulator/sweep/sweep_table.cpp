#include "simulator/sweep/sweep_table.hpp"

#include <algorithm>
#include <set>

namespace stepsim::sweep {
namespace {

void flatten_into(const std::string& prefix, const nlohmann::json& node, std::map<std::string, std::string>& out) {
  for (const auto& [k, v] : node.items()) {
    const std::string name = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object()) {
      flatten_into(name, v, out);
    } else if (v.is_array()) {
      // Lists of text (the report's sets and notes) are one cell; per-rank rows stay in the JSON.
      if (v.empty() || !std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_string(); })) continue;
      std::string cell;
      for (const auto& e : v) cell += (cell.empty() ? "" : "; ") + e.get<std::string>();
      out[name] = cell;
    } else if (name == "sim.wall_s" || name == "config") {
      continue;  // differs run to run; an absolute path of this machine (the manifest has it)
    } else if (v.is_string()) {
      out[name] = v.get<std::string>();
    } else if (v.is_null()) {
      out[name] = "";
    } else {
      out[name] = v.dump();
    }
  }
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::map<std::string, std::string> flatten_report(const nlohmann::json& report) {
  std::map<std::string, std::string> out;
  if (report.is_object()) flatten_into("", report, out);
  return out;
}

int SweepTable::column(const std::string& name) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return int(i);
  return -1;
}

SweepTable build_table(const std::vector<GridAxis>& axes, const std::vector<PointOutcome>& outcomes) {
  SweepTable t;
  std::set<std::string> grid_keys;
  for (const auto& a : axes) {
    t.columns.push_back(a.key);
    grid_keys.insert(a.key);
  }
  t.columns.push_back("error");
  std::set<std::string> fields;
  for (const auto& o : outcomes)
    for (const auto& [name, value] : o.fields)
      if (!grid_keys.count(name) && name != "error") fields.insert(name);
  t.columns.insert(t.columns.end(), fields.begin(), fields.end());

  for (const auto& o : outcomes) {
    std::vector<std::string> row;
    row.reserve(t.columns.size());
    for (const auto& [key, value] : o.point.values) row.push_back(value);
    row.push_back(o.error);
    for (const auto& name : fields) {
      const auto it = o.fields.find(name);
      row.push_back(it == o.fields.end() ? "" : it->second);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

void write_csv(const SweepTable& table, std::ostream& out) {
  const auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << csv_cell(cells[i]);
    out << "\n";
  };
  line(table.columns);
  for (const auto& row : table.rows) line(row);
}

}  // namespace stepsim::sweep
