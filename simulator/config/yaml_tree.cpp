#include "simulator/config/yaml_tree.hpp"

#include <yaml-cpp/yaml.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <deque>
#include <mutex>
#include <vector>
#include <limits>

#include "vocabulary/config_error.hpp"
#include "simulator/io/tied_child.hpp"

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
// values and their bytes as they are copied and stop at bounds no real config comes near (a
// config file is at most 1 MiB: a long string aliased a few thousand times stays under the value
// bound but needs gigabytes).
constexpr size_t kMaxValues = 100000;
constexpr size_t kMaxBytes = size_t(16) << 20;
constexpr int kMaxDepth = 64;

struct Budget {
  const std::string& source;
  size_t values = 0;
  size_t bytes = 0;
};

// Where a message points: the dotted key, or the whole document at the top.
std::string where(const Budget& budget, const std::string& path) {
  return budget.source + ": " + (path.empty() ? std::string("the document") : path);
}

// Counts text copied out of the tree (a scalar or a map key, once per alias that reaches it).
void charge_bytes(Budget& budget, const std::string& path, size_t bytes) {
  budget.bytes += bytes;
  if (budget.bytes > kMaxBytes)
    throw ConfigError(where(budget, path) + ": more than " + std::to_string(kMaxBytes >> 20) +
                      " MiB of text once its aliases are expanded (an alias bomb would exhaust memory); write the "
                      "config without aliases of long keys or values");
}

// `path` is the dotted key of `node` ("" at the top), so messages name the full key.
json to_json(const YAML::Node& node, Budget& budget, const std::string& path = "", int depth = 0) {
  const std::string& source = budget.source;
  if (++budget.values > kMaxValues)
    throw ConfigError(where(budget, path) + ": more than " + std::to_string(kMaxValues) +
                      " values once its aliases are expanded (an alias bomb would exhaust memory); write the config "
                      "without nested aliases");
  if (depth > kMaxDepth)
    throw ConfigError(where(budget, path) + ": nested more than " +
                      std::to_string(kMaxDepth) + " levels deep; a config is sections of keys");
  // A tag ("!!null 2", "!custom x") would be dropped here without a word: refuse it instead. yaml-cpp
  // tags a plain node "?" and a quoted scalar "!".
  if (const std::string& tag = node.Tag(); !tag.empty() && tag != "?" && tag != "!")
    throw ConfigError(where(budget, path) + ": YAML tag " + tag +
                      " is not read; remove it and write the value itself");
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Scalar:
      charge_bytes(budget, path, node.Scalar().size());
      return scalar_to_json(node);
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
        charge_bytes(budget, path, key.size());
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

// yaml-cpp 0.7 loops forever, allocating, on a ',' where a document's root node should start or
// right after a root that is a quoted or flow node (",a", "\"x\",a", "[1],b", " &a,2]\nx: 1"; found by
// scripts/fuzz.sh). Such a comma is never valid YAML: refuse it before the parser sees it.
void reject_root_comma_from(const std::string& text, const std::string& source, size_t p) {
  const size_t n = text.size();
  const auto skip_blank = [&] {
    for (;;) {
      while (p < n && (text[p] == ' ' || text[p] == '\t' || text[p] == '\r' || text[p] == '\n')) ++p;
      if (p < n && (text[p] == '#' || text[p] == '%')) {  // a comment or directive line
        while (p < n && text[p] != '\n') ++p;
        continue;
      }
      if (p < n && (text.compare(p, 3, "---") == 0 || text.compare(p, 3, "...") == 0)) {  // document markers
        p += 3;
        continue;
      }
      if (p < n && (text[p] == '&' || text[p] == '!')) {  // an anchor or tag before the node
        // Its name ends at a blank or a ',' (no flow indicator belongs to an anchor; "&a,\nx" hangs too).
        while (p < n && text[p] != ' ' && text[p] != '\t' && text[p] != '\n' && text[p] != ',') ++p;
        continue;
      }
      return;
    }
  };
  const auto fail = [&] {
    throw ConfigError(source + ": malformed YAML: a ',' outside any [...] or {...} list; quote the value or put it in "
                               "brackets");
  };
  skip_blank();
  if (p < n && text[p] == ',') fail();
  if (p >= n || (text[p] != '"' && text[p] != '\'' && text[p] != '[' && text[p] != '{')) return;
  // Skip the quoted or flow root node, then look at what follows it.
  int depth = 0;
  char quote = 0;
  const size_t start = p;
  for (; p < n; ++p) {
    const char c = text[p];
    if (quote) {
      if (quote == '"' && c == '\\') ++p;
      else if (c == quote) quote = 0;
      if (quote == 0 && depth == 0) break;
    } else if ((c == '"' || c == '\'') && (p == start || std::string(" \t\n[{,:").find(text[p - 1]) != std::string::npos)) {
      quote = c;  // a quote opens a scalar only where one starts ("x'" inside a plain scalar does not)
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (--depth <= 0) break;
    }
  }
  if (p >= n) return;  // unterminated: the parser reports it
  ++p;
  skip_blank();
  if (p < n && text[p] == ',') fail();
}

// Also on a line that starts with ',' outside any flow list once a block map is open ("  a: 1\n ,"),
// found by scripts/fuzz.sh: such a line is never a config's (quote a value that starts with ',').
void reject_line_comma(const std::string& text, const std::string& source) {
  int depth = 0;
  char quote = 0;
  bool line_start = true;
  for (size_t p = 0; p < text.size(); ++p) {
    const char c = text[p];
    if (c == '\n') {
      line_start = true;
      continue;
    }
    if (quote) {
      if (quote == '"' && c == '\\') ++p;
      else if (c == quote) quote = 0;
      line_start = false;
      continue;
    }
    if (line_start && (c == ' ' || c == '\t')) continue;
    if (line_start && c == ',' && depth == 0)
      throw ConfigError(source + ": malformed YAML: a line starts with ',' outside any [...] or {...} list; quote the "
                                 "value or put it in brackets");
    const bool after_blank = line_start || text[p - 1] == ' ' || text[p - 1] == '\t';
    line_start = false;
    if (c == '#' && after_blank) {  // a comment: skip to the end of the line
      while (p + 1 < text.size() && text[p + 1] != '\n') ++p;
    } else if ((c == '"' || c == '\'') && after_blank) {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

void reject_root_comma(const std::string& text, const std::string& source) {
  reject_line_comma(text, source);
  reject_root_comma_from(text, source, 0);
  for (size_t at = text.find("\n---"); at != std::string::npos; at = text.find("\n---", at + 1))
    reject_root_comma_from(text, source, at + 1);  // every later document
}


json parse_in_process(const std::string& text, const std::string& source) {
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

// yaml-cpp 0.7 loops forever on some malformed texts (fuzzing found several; the shapes known are
// refused above, before parsing). As the last guard a forked child parses the text first under a
// time limit: a text it cannot parse in kParseLimitS seconds (or that kills it) is one error line,
// not a hang; otherwise this process parses it (the child's tree would not survive a trip through
// JSON text: NaN and infinities must reach validation as they are).
// Fuzz builds (fuzz/, libFuzzer) keep the guard, so the fuzzer tests the parse as shipped, with a
// shorter limit (below scripts/fuzz.sh's -timeout, so the guard and not libFuzzer stops a loop);
// the parse in this process after the child's still gives the fuzzer the parser's coverage.
#ifdef STEPSIM_FUZZ_BUILD
constexpr unsigned kParseLimitS = 2;
#else
constexpr unsigned kParseLimitS = 10;
#endif

// A lone plain word or number (most --set and --grid values) is no text yaml-cpp loops on: parsed
// here directly, as forking per value made a 20,000-value grid take 24 s to check.
bool plain_word(const std::string& text) {
  return !text.empty() && text.size() <= 64 && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-';
  });
}

// Texts parsed before (the last few, per process) with their trees: a search loads one config, its
// preset and its software profile thousands of times, and a fork and a parse per load took most of
// its time. A text's tree does not depend on where it came from (`source` only names it in errors,
// and a text that fails is never kept).
class ParsedTexts {
 public:
  bool find(const std::string& text, json& tree) {
    const std::lock_guard<std::mutex> hold(lock_);
    for (const auto& [t, j] : texts_)
      if (t == text) {
        tree = j;
        return true;
      }
    return false;
  }
  void add(const std::string& text, const json& tree) {
    const std::lock_guard<std::mutex> hold(lock_);
    for (const auto& [t, j] : texts_)
      if (t == text) return;
    texts_.emplace_back(text, tree);
    if (texts_.size() > 8) texts_.pop_front();
  }

 private:
  std::mutex lock_;
  std::deque<std::pair<std::string, json>> texts_;
};

ParsedTexts& parsed_texts() {
  static ParsedTexts texts;
  return texts;
}

json parse_with_time_limit(const std::string& text, const std::string& source) {
  if (plain_word(text)) return parse_in_process(text, source);
  if (json tree; parsed_texts().find(text, tree)) return tree;
  const pid_t pid = io::fork_tied_child();
  if (pid == 0) {
    // The alarm must kill the child: an inherited handler (libFuzzer's, a caller's) might not.
    std::signal(SIGALRM, SIG_DFL);
    ::alarm(kParseLimitS);
    try {
      (void)parse_in_process(text, source);
    } catch (...) {
    }
    ::_exit(0);
  }
  if (pid > 0) {
    const int status = io::wait_for_child(pid);
    const bool timed_out = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
    bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
#ifdef STEPSIM_FUZZ_BUILD
    // A crash (a sanitizer's report) is the fuzzer's to see: parse here again, where it counts.
    failed = timed_out;
#endif
    if (failed)
      throw ConfigError(source + ": malformed YAML: the parser " +
                        (timed_out ? "did not finish within " + std::to_string(kParseLimitS) + " s"
                                   : std::string("crashed")) +
                        " (yaml-cpp fails so on some malformed texts); check the syntax, e.g. unbalanced [ ] or { }");
  }
  json tree = parse_in_process(text, source);
  if (pid > 0) parsed_texts().add(text, tree);
  return tree;
}

}  // namespace

json yaml_text_to_json(const std::string& text, const std::string& source) {
  reject_root_comma(text, source);
  return parse_with_time_limit(text, source);
}

}  // namespace stepsim
