#include "simulator/importers/imported_plan.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/io/json_text.hpp"

namespace stepsim::importers {
namespace {

// A YAML scalar for a value the importers produce (integers, bools, names, paths).
std::string yaml_value(const nlohmann::json& v) {
  if (!v.is_string()) return io::json_text(v);
  const std::string& s = v.get_ref<const std::string&>();
  static const char* const reserved[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
  bool plain = !s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+-") ==
                                 std::string::npos;
  plain = plain && !std::isdigit(static_cast<unsigned char>(s[0])) && s[0] != '-' && s[0] != '+' && s[0] != '.';
  for (const char* r : reserved) {
    std::string lower = s;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    plain = plain && lower != r;
  }
  return plain ? s : io::json_text(v);  // a JSON string is a YAML double-quoted scalar
}

std::vector<std::string> words_of(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : s) {
    if (c == ' ') {
      if (!cur.empty()) out.push_back(std::move(cur)), cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::string comment_of(const PlanEntry& e) {
  std::string c = io::shortened(io::printable(e.from), 160);
  if (e.line > 0) c += " (line " + std::to_string(e.line) + ")";
  return c;
}

}  // namespace

void ImportedPlan::set(const std::string& key, nlohmann::json value, const std::string& from, int line) {
  for (auto& e : entries)
    if (e.key == key) {
      e = {key, std::move(value), from, line};
      return;
    }
  entries.push_back({key, std::move(value), from, line});
}

const PlanEntry* ImportedPlan::find(const std::string& key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

std::string plan_yaml(const ImportedPlan& plan, const std::string& config_json_base) {
  std::string out;
  // Header lines wrapped at 100 columns.
  for (const auto& h : plan.header) {
    std::string line;
    for (const auto& word : words_of(io::printable(h))) {
      if (!line.empty() && line.size() + 1 + word.size() > 98) out += "# " + line + "\n", line.clear();
      line += (line.empty() ? "" : " ") + word;
    }
    out += "# " + line + "\n";
  }
  // Sections in the order the shipped configs use; keys in the order the importer set them.
  static const char* const order[] = {"model", "train", "parallel", "schedule", "hardware", "software", "cluster", "scenario", "sim"};
  for (const char* section : order) {
    std::vector<const PlanEntry*> in;
    for (const auto& e : plan.entries) {
      const auto dot = e.key.find('.');
      if ((dot == std::string::npos ? e.key : e.key.substr(0, dot)) == section) in.push_back(&e);
    }
    if (in.empty()) continue;
    out += "\n";
    const bool top_level = in.size() == 1 && in.front()->key == section;
    if (!top_level) out += std::string(section) + ":\n";
    for (const PlanEntry* e : in) {
      nlohmann::json value = e->value;
      // The shipped HF config.json: relative to the plan's folder when that folder is in the source
      // tree (the plan then moves with the checkout), else absolute.
      if (e->key == "model.config_json" && value.is_string() && !config_json_base.empty()) {
        const std::string tree = std::filesystem::path(shipped_path("")).lexically_normal().string();
        const std::string base = (std::filesystem::path(config_json_base) / "").lexically_normal().string();
        std::error_code ec;
        const auto rel = std::filesystem::relative(value.get<std::string>(), config_json_base, ec);
        if (!ec && !rel.empty() && base.rfind(tree, 0) == 0) value = rel.string();
      }
      const std::string name = top_level ? e->key : "  " + e->key.substr(e->key.find('.') + 1);
      std::string line = name + ": " + yaml_value(value);
      if (line.size() < 44) line.resize(44, ' ');
      out += line + "  # " + comment_of(*e) + "\n";
    }
  }
  return out;
}

void check_imported_plan(const ImportedPlan& plan, const std::string& yaml, const std::string& base_dir) {
  const std::string source = plan.source + " (imported)";
  try {
    load_plan_from_string(yaml, source, {}, base_dir);
  } catch (const ConfigError& e) {
    const std::string msg = e.what(), prefix = source + ": ";
    if (msg.rfind(prefix, 0) != 0) throw;
    const std::string rest = msg.substr(prefix.size());
    const auto colon = rest.find(": ");
    const std::string key = colon == std::string::npos ? "" : rest.substr(0, colon);
    if (const PlanEntry* entry = plan.find(key)) {
      std::string where = plan.source;
      if (entry->line > 0) where.append(":").append(std::to_string(entry->line));
      throw ConfigError(where + ": " + entry->from + ": " + rest.substr(colon + 2) + " (imported as " + key + ")");
    }
    throw ConfigError(plan.source + ": the imported plan does not hold: " + rest);
  }
}

std::string not_imported_note(const ImportedPlan& plan) {
  const auto joined = [](const std::vector<std::string>& xs) {
    std::string s;
    for (const auto& x : xs) s += (s.empty() ? "" : ", ") + x;
    return io::shortened(io::printable(s), 4000);
  };
  std::string note;
  if (!plan.not_imported.empty())
    note = "not imported, no effect in stepsim's cost model: " + joined(plan.not_imported);
  if (!plan.unknown.empty())
    note += (note.empty() ? "" : "; ") + std::string("unknown to stepsim, not imported (check them): ") + joined(plan.unknown);
  return note;
}

}  // namespace stepsim::importers
