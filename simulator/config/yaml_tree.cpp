#include "simulator/config/yaml_tree.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <vector>
#include <limits>

#include "simulator/config/config_error.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

json scalar_to_json(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: always a string
  if (s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  // YAML 1.2 special floats, so the range checks can reject them by name.
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "+.Inf" || s == "+.INF")
    return std::numeric_limits<double>::infinity();
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") return -std::numeric_limits<double>::infinity();
  int64_t i = 0;
  const char* end = s.data() + s.size();
  if (auto [p, ec] = std::from_chars(s.data(), end, i); ec == std::errc() && p == end) return i;
  double d = 0;
  if (auto [p, ec] = std::from_chars(s.data(), end, d); ec == std::errc() && p == end) return d;
  return s;
}

// A config is a few hundred values. Aliases share nodes in yaml-cpp's tree but are copied here, so
// a few hundred bytes of nested aliases ("billion laughs") would expand to gigabytes: count the
// values as they are copied and stop at a bound no real config comes near.
constexpr size_t kMaxValues = 100000;
constexpr int kMaxDepth = 64;

struct Budget {
  const std::string& source;
  size_t values = 0;
};

// `path` is the dotted key of `node` ("" at the top), so messages name the full key.
json to_json(const YAML::Node& node, Budget& budget, const std::string& path = "", int depth = 0) {
  const std::string& source = budget.source;
  if (++budget.values > kMaxValues)
    throw ConfigError(source + ": " + (path.empty() ? std::string("the document") : path) + ": more than " +
                      std::to_string(kMaxValues) +
                      " values once its aliases are expanded (an alias bomb would exhaust memory); write the config "
                      "without nested aliases");
  if (depth > kMaxDepth)
    throw ConfigError(source + ": " + (path.empty() ? std::string("the document") : path) + ": nested more than " +
                      std::to_string(kMaxDepth) + " levels deep; a config is sections of keys");
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Scalar: return scalar_to_json(node);
    case YAML::NodeType::Sequence: {
      json arr = json::array();
      for (const auto& item : node) arr.push_back(to_json(item, budget, path, depth + 1));
      return arr;
    }
    case YAML::NodeType::Map: {
      json obj = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar())
          throw ConfigError(source + ": line " + std::to_string(kv.first.Mark().line + 1) +
                            ": map keys must be plain names");
        const std::string key = kv.first.Scalar();
        const std::string dotted = path.empty() ? key : path + "." + key;
        if (obj.contains(key))
          throw ConfigError(source + ": " + dotted + ": given twice (line " +
                            std::to_string(kv.first.Mark().line + 1) + "); keep one");
        obj[key] = to_json(kv.second, budget, dotted, depth + 1);
      }
      return obj;
    }
  }
  return nullptr;
}

}  // namespace

json yaml_text_to_json(const std::string& text, const std::string& source) {
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.size() > 1)
      throw ConfigError(source + ": holds " + std::to_string(docs.size()) +
                        " YAML documents (separated by ---); a config is one document, so merge or remove the others");
    Budget budget{source};
    return docs.empty() ? json(nullptr) : to_json(docs.front(), budget);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source + ": malformed YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                      std::to_string(e.mark.column + 1) + ": " + e.msg + "; fix the syntax there");
  }
}

}  // namespace stepsim
