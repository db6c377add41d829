#include "simulator/importers/shell_script.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "simulator/importers/shell_expansion.hpp"
#include "simulator/importers/shell_lexer.hpp"
#include "simulator/importers/shell_parser.hpp"
#include "vocabulary/config_error.hpp"
#include "simulator/io/json_text.hpp"

// The shell reader's last pass: the parsed commands run as bash would run them, without running
// anything: assignments set variables (simulator/importers/shell_expansion.hpp), tests the file
// decides choose `if` branches and `&&` / `||` arms, and every other command is listed with its
// expanded words.
namespace stepsim::importers {
namespace {

using namespace shell;

enum class Truth { False, True, Unknown };

class Evaluator {
 public:
  Evaluator(const std::string& source) : source_(source), x_(source) {}

  ShellScript run(const List& program) {
    eval_list(program, true, "");
    for (const auto& name : option_order_) {
      const Var& v = x_.vars()[name];
      if (!v.unknown.empty() || v.elems.empty()) continue;
      std::vector<ShellWord> words;
      // Split as the unquoted expansion (${ARGS[@]}, $ARGS) that a launch line would use.
      for (const auto& e : v.elems) {
        if (!e.known()) {
          words.push_back(e);
          continue;
        }
        for (auto& piece : split_fields(e.text)) words.push_back({piece, e.line, piece, ""});
      }
      if (!words.empty() && words.front().text.rfind("--", 0) == 0) out_.option_lists.push_back(std::move(words));
    }
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const {
    throw ConfigError(source_ + ":" + std::to_string(line) + ": " + what);
  }

  // --- assignments ---------------------------------------------------------------------------

  // NAME=value (or NAME+=value) as the start of a word's first unquoted literal.
  static std::optional<std::pair<std::string, bool>> assignment_name(const RawWord& w, RawWord& value) {
    if (w.parts.empty() || w.parts[0].kind != PartKind::Literal || w.parts[0].quoted) return std::nullopt;
    const std::string& t = w.parts[0].text;
    size_t n = 0;
    if (t.empty() || !(std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_')) return std::nullopt;
    while (n < t.size() && (std::isalnum(static_cast<unsigned char>(t[n])) || t[n] == '_')) ++n;
    const bool append = n + 1 < t.size() && t[n] == '+' && t[n + 1] == '=';
    if (!append && !(n < t.size() && t[n] == '=')) return std::nullopt;
    value = w;
    value.parts[0].text = t.substr(n + (append ? 2 : 1));
    return std::make_pair(t.substr(0, n), append);
  }

  // NAME[index]=value (or +=): the array's name, else "".
  static std::string element_assignment(const RawWord& w) {
    if (w.parts.empty() || w.parts[0].kind != PartKind::Literal || w.parts[0].quoted) return "";
    const std::string& t = w.parts[0].text;
    const size_t b = t.find('[');
    if (b == std::string::npos || !valid_name(t.substr(0, b))) return "";
    // The index may hold expansions ($i): the closing "]=" is in the word's text as written.
    const size_t close = w.raw.find("]=") != std::string::npos ? w.raw.find("]=") : w.raw.find("]+=");
    return close == std::string::npos ? "" : t.substr(0, b);
  }

  void assign(const std::string& name, Var v, bool append, bool certain, const std::string& uncertain_why) {
    if (!certain) {
      x_.vars()[name] = Var{{}, v.array, name + " is " + uncertain_why};
      return;
    }
    Var& cur = x_.vars()[name];
    if (append && cur.unknown.empty()) {
      if (!v.unknown.empty()) cur = Var{{}, cur.array || v.array, v.unknown};
      else if (v.array || cur.array) {
        cur.array = true;
        for (auto& e : v.elems) cur.elems.push_back(std::move(e));
      } else if (!cur.elems.empty() && !v.elems.empty()) {
        cur.elems.front().text += v.elems.front().text;
      } else {
        cur = std::move(v);
      }
    } else if (append) {
      // Appending to an unknown value leaves it unknown.
    } else {
      cur = std::move(v);
    }
    if (cur.unknown.empty() && !cur.elems.empty() && cur.elems.front().text.rfind("--", 0) == 0 &&
        std::find(option_order_.begin(), option_order_.end(), name) == option_order_.end())
      option_order_.push_back(name);
    if (cur.elems.size() > kMaxWordsPerExpansion) fail(cur.elems.back().line, name + " holds over 100000 words");
  }

  void assign_array(const Token& t, bool certain, const std::string& why) {
    Var v;
    v.array = true;
    // An element only running could tell stays an unknown element: the others are still known.
    for (const auto& e : t.elems)
      for (auto& f : x_.expand_fields(e)) {
        if (!f.known()) f.unknown = name_unknown(t.name, f);
        v.elems.push_back(std::move(f));
      }
    assign(t.name, std::move(v), t.append, certain, why);
  }

  static std::string name_unknown(const std::string& name, const ShellWord& w) {
    return name + " = " + io::shortened(w.raw, 60) + " (line " + std::to_string(w.line) + "), where " + w.unknown;
  }

  bool apply_assignment_word(const RawWord& w, bool certain, const std::string& why) {
    RawWord value;
    const auto a = assignment_name(w, value);
    if (!a) return false;
    ShellWord v = x_.expand_joined(value);
    Var var;
    if (v.known()) var.elems.push_back(std::move(v));
    else var.unknown = name_unknown(a->first, v);
    assign(a->first, std::move(var), a->second, certain, why);
    return true;
  }

  // --- tests ---------------------------------------------------------------------------------

  static Truth not_(Truth t) { return t == Truth::Unknown ? t : t == Truth::True ? Truth::False : Truth::True; }

  // [ ... ], [[ ... ]], test ...: string and integer comparisons, -z and -n.
  Truth eval_test(const std::vector<ShellWord>& a, size_t& i, size_t end, size_t depth) {
    if (depth > kMaxNesting) return Truth::Unknown;
    Truth acc = eval_test_term(a, i, end, depth);
    while (i < end) {
      const std::string& op = a[i].text;
      if (op == "-a" || op == "&&") {
        ++i;
        const Truth r = eval_test_term(a, i, end, depth);
        acc = (acc == Truth::False || r == Truth::False) ? Truth::False
              : (acc == Truth::True && r == Truth::True) ? Truth::True
                                                          : Truth::Unknown;
      } else if (op == "-o" || op == "||") {
        ++i;
        const Truth r = eval_test_term(a, i, end, depth);
        acc = (acc == Truth::True || r == Truth::True) ? Truth::True
              : (acc == Truth::False && r == Truth::False) ? Truth::False
                                                            : Truth::Unknown;
      } else {
        return Truth::Unknown;
      }
    }
    return acc;
  }

  Truth eval_test_term(const std::vector<ShellWord>& a, size_t& i, size_t end, size_t depth) {
    if (i >= end || depth > kMaxNesting) return Truth::Unknown;
    if (a[i].text == "!") {
      ++i;
      return not_(eval_test_term(a, i, end, depth + 1));
    }
    if (a[i].text == "(") {
      ++i;
      const Truth t = eval_test(a, i, end, depth + 1);
      if (i < end && a[i].text == ")") ++i;
      else return Truth::Unknown;
      return t;
    }
    static const std::set<std::string> binary = {"=", "==", "!=", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "=~", "<", ">"};
    if (i + 2 < end + 1 && i + 1 < end && binary.count(a[i + 1].text)) {
      const ShellWord &l = a[i], &op = a[i + 1], &r = a[i + 2 < end ? i + 2 : i + 1];
      if (i + 2 >= end) return i = end, Truth::Unknown;
      i += 3;
      if (!l.known() || !r.known()) return Truth::Unknown;
      const std::string& o = op.text;
      if (o == "=" || o == "==" || o == "!=") {
        // A pattern (unquoted * ? [) is matched by bash, not compared: not evaluated here.
        if (r.raw.find_first_of("*?[") != std::string::npos && r.raw.front() != '"' && r.raw.front() != '\'')
          return Truth::Unknown;
        const bool eq = l.text == r.text;
        return (o == "!=") != eq ? Truth::True : Truth::False;
      }
      if (o == "<" || o == ">") return (o == "<" ? l.text < r.text : l.text > r.text) ? Truth::True : Truth::False;
      if (o == "=~") return Truth::Unknown;
      const auto integer = [](const std::string& s) -> std::optional<int64_t> {
        if (s.empty() || s.size() > 18) return std::nullopt;
        size_t k = s[0] == '-' ? 1 : 0;
        if (k == s.size() || s.find_first_not_of("0123456789", k) != std::string::npos) return std::nullopt;
        return int64_t(std::stoll(s));
      };
      const auto x = integer(l.text), y = integer(r.text);
      if (!x || !y) return Truth::Unknown;
      const bool v = o == "-eq" ? *x == *y : o == "-ne" ? *x != *y : o == "-lt" ? *x < *y : o == "-le" ? *x <= *y
                     : o == "-gt" ? *x > *y : *x >= *y;
      return v ? Truth::True : Truth::False;
    }
    if (a[i].text.size() == 2 && a[i].text[0] == '-' && i + 1 < end) {
      const std::string o = a[i].text;
      const ShellWord& w = a[i + 1];
      i += 2;
      if ((o == "-z" || o == "-n") && w.known()) return (o == "-z") == w.text.empty() ? Truth::True : Truth::False;
      return Truth::Unknown;  // -f, -d, -e, ...: the file system when it runs
    }
    const ShellWord& w = a[i++];
    if (!w.known()) return Truth::Unknown;
    return w.text.empty() ? Truth::False : Truth::True;
  }

  Truth eval_condition_command(const Node& n) {
    if (n.kind != Node::Simple || n.tokens.empty()) return Truth::Unknown;
    std::vector<ShellWord> words;
    for (const auto& t : n.tokens) {
      if (t.kind != TokKind::Word) return Truth::Unknown;
      words.push_back(x_.expand_joined(t.word));
    }
    const std::string& head = words.front().text;
    Truth t = Truth::Unknown;
    if (head == "true" || head == ":") t = Truth::True;
    else if (head == "false") t = Truth::False;
    else if ((head == "[" && words.back().text == "]") || (head == "[[" && words.back().text == "]]")) {
      size_t i = 1;
      t = eval_test(words, i, words.size() - 1, 0);
    } else if (head == "test") {
      size_t i = 1;
      t = eval_test(words, i, words.size(), 0);
    }
    return n.negated ? not_(t) : t;
  }

  // A condition list: commands joined by && and || (left to right, as bash does).
  Truth eval_condition(const List& cond) {
    if (cond.empty()) return Truth::Unknown;
    Truth acc = Truth::Unknown;
    for (size_t k = 0; k < cond.size(); ++k) {
      const Node& n = cond[k];
      if (k == 0 || n.connector == ";") {
        acc = eval_condition_command(n);
      } else if (n.connector == "&&") {
        if (acc == Truth::False) continue;
        const Truth r = eval_condition_command(n);
        acc = acc == Truth::True ? r : (r == Truth::False ? Truth::False : Truth::Unknown);
      } else if (n.connector == "||") {
        if (acc == Truth::True) continue;
        const Truth r = eval_condition_command(n);
        acc = acc == Truth::False ? r : (r == Truth::True ? Truth::True : Truth::Unknown);
      } else {
        return Truth::Unknown;  // a pipeline
      }
    }
    return acc;
  }

  // --- statements ----------------------------------------------------------------------------

  Truth eval_simple(const Node& n, bool certain, const std::string& why) {
    if (n.tokens.empty()) return Truth::True;
    static const std::set<std::string> declarers = {"export", "declare", "local", "readonly", "typeset"};
    const Token& first = n.tokens.front();
    const bool declares = first.kind == TokKind::Word && first.word.parts.size() == 1 &&
                          first.word.parts[0].kind == PartKind::Literal && declarers.count(first.word.parts[0].text);
    // Only assignments (or export/declare NAME=...): set variables.
    bool only_assignments = true;
    for (size_t k = declares ? 1 : 0; k < n.tokens.size(); ++k) {
      const Token& t = n.tokens[k];
      RawWord ignored;
      if (t.kind == TokKind::Array) continue;
      if (declares && !t.word.parts.empty() && !t.word.parts[0].text.empty() && t.word.parts[0].text[0] == '-') continue;
      if (declares || assignment_name(t.word, ignored) || !element_assignment(t.word).empty()) continue;
      only_assignments = false;
      break;
    }
    here_document_effects(n);
    if (only_assignments) {
      const std::string transform = declares ? transforming_option(n) : "";
      for (size_t k = declares ? 1 : 0; k < n.tokens.size(); ++k) {
        const Token& t = n.tokens[k];
        if (!transform.empty()) {  // declare -i X=2+3: bash transforms the value
          RawWord value;
          const auto a = t.kind == TokKind::Array ? std::make_optional(std::make_pair(t.name, t.append))
                                                  : assignment_name(t.word, value);
          const std::string name = a ? a->first : t.word.raw;
          if (valid_name(name))
            x_.mark_unknown(name, name + " is declared " + transform + " on line " + std::to_string(n.line) +
                                      " (bash transforms or redirects its value), which stepsim does not evaluate");
          continue;
        }
        if (t.kind == TokKind::Array) assign_array(t, certain, why);
        else if (const std::string array = element_assignment(t.word); !array.empty())
          x_.mark_unknown(array, array + " has an element assigned on line " + std::to_string(t.line) +
                                     " (" + io::shortened(t.word.raw, 40) + "), which stepsim does not follow");
        else apply_assignment_word(t.word, certain, why);
      }
      return Truth::True;
    }
    const Truth status = eval_condition_command(n);  // a test, true or false
    // A command: NAME=value words before it are its environment only.
    ShellCommand c;
    c.line = n.line;
    c.certain = certain;
    size_t k = 0;
    for (RawWord ignored; k < n.tokens.size() && n.tokens[k].kind == TokKind::Word && assignment_name(n.tokens[k].word, ignored);)
      ++k;
    for (; k < n.tokens.size(); ++k) {
      if (n.tokens[k].kind != TokKind::Word) continue;
      for (auto& w : x_.expand_fields(n.tokens[k].word)) c.words.push_back(std::move(w));
      if (c.words.size() > kMaxWordsPerExpansion) fail(n.line, "a command of over 100000 words");
    }
    command_effects(c.words, n.line, certain, why);
    // Tests and true/false decide branches; they launch nothing.
    static const std::set<std::string> builtins = {"[", "[[", "test", "true", "false", ":"};
    if (listing_ && !c.words.empty() && !(c.words.front().known() && builtins.count(c.words.front().text)))
      out_.commands.push_back(std::move(c));
    return status;
  }

  // --- what commands do to variables besides NAME=value ---------------------------------------

  // declare / typeset / local with -i, -n, -l or -u: bash evaluates, redirects or recases what
  // is assigned. Returns the option ("-i"), or "".
  static std::string transforming_option(const Node& n) {
    const Token& first = n.tokens.front();
    const std::string& cmd = first.word.parts[0].text;
    if (cmd != "declare" && cmd != "typeset" && cmd != "local") return "";
    for (size_t k = 1; k < n.tokens.size(); ++k) {
      const Token& t = n.tokens[k];
      if (t.kind != TokKind::Word || t.word.parts.empty() || t.word.parts[0].text.empty()) continue;
      const std::string& w = t.word.parts[0].text;
      if (w[0] != '-') continue;
      for (const char c : w.substr(1))
        if (c == 'i' || c == 'n' || c == 'l' || c == 'u') return std::string("-") + c;
    }
    return "";
  }

  // ${NAME:=word} and $(( x++ )) in an unquoted here-document's body assign when bash expands it.
  void here_document_effects(const Node& n) {
    for (const auto& name : n.assigns)
      x_.mark_unknown(name, name + " is changed by the expansions of the here-document on line " +
                                std::to_string(n.line) + ", which stepsim does not expand");
  }

  // Options as the builtins read them (getopts style): `with_value` lists the letters that take a
  // value; returns the operands after the options, and each option's values in `values`.
  static std::vector<const ShellWord*> operands(const std::vector<ShellWord>& words, size_t from, const std::string& with_value,
                                                std::map<char, std::vector<const ShellWord*>>& values) {
    size_t k = from;
    for (; k < words.size(); ++k) {
      const ShellWord& w = words[k];
      if (!w.known() || w.text.size() < 2 || w.text[0] != '-') break;
      if (w.text == "--") {
        ++k;
        break;
      }
      for (size_t i = 1; i < w.text.size(); ++i) {
        const char c = w.text[i];
        if (with_value.find(c) == std::string::npos) {
          values[c];
          continue;
        }
        if (i + 1 < w.text.size()) {  // -vNAME
          values[c].push_back(nullptr);
        } else if (k + 1 < words.size()) {
          values[c].push_back(&words[++k]);
        }
        break;
      }
    }
    std::vector<const ShellWord*> out;
    for (; k < words.size(); ++k) out.push_back(&words[k]);
    return out;
  }

  // A name a builtin writes to: unknown from here on for `why`; a name only running could tell
  // makes every variable unknown.
  void clobber(const ShellWord* w, const std::string& what, int line) {
    if (w == nullptr || !w->known()) {
      x_.forget_all([=](const std::string& name) {
        return name + " may be changed by " + what + " on line " + std::to_string(line) +
               ", whose variable name stepsim cannot know from the file alone";
      });
      return;
    }
    std::string name = w->text;
    if (const auto b = name.find('['); b != std::string::npos) name.resize(b);  // a[1]: the array
    if (valid_name(name)) x_.mark_unknown(name, name + " is set by " + what + " on line " + std::to_string(line) + ", known only when it runs");
  }

  // Builtins that change variables without NAME=value, and calls of the file's functions.
  void command_effects(const std::vector<ShellWord>& words, int line, bool certain, const std::string& why) {
    size_t k = 0;
    while (k < words.size() && words[k].known() && (words[k].text == "builtin" || words[k].text == "command")) ++k;
    if (k >= words.size() || !words[k].known()) return;
    const std::string& cmd = words[k].text;
    std::map<char, std::vector<const ShellWord*>> opt;
    const std::string at = " on line " + std::to_string(line);
    if (cmd == "eval" || cmd == "source" || cmd == ".") {
      const std::string what = cmd == "eval" ? "the eval" + at + ", which stepsim does not run"
                                             : "the file sourced" + at +
                                                   (k + 1 < words.size() ? " (" + io::shortened(words[k + 1].raw, 60) + ")" : "") +
                                                   ", which stepsim does not read";
      x_.forget_all([what](const std::string& name) { return name + " may be changed by " + what; });
      if (out_.unread.size() < 8) out_.unread.push_back(what.substr(0, what.find(", which")));
    } else if (cmd == "unset") {
      const auto names = operands(words, k + 1, "", opt);
      if (opt.count('f')) return;  // functions only
      for (const ShellWord* w : names) {
        if (!w->known()) {
          clobber(nullptr, "unset", line);
          continue;
        }
        std::string name = w->text;
        if (const auto b = name.find('['); b != std::string::npos) {  // one element of an array
          name.resize(b);
          if (valid_name(name)) x_.mark_unknown(name, name + " has an element unset" + at + ", which stepsim does not follow");
          continue;
        }
        if (!valid_name(name)) continue;
        if (certain) x_.unset(name, line);
        else x_.mark_unknown(name, name + " may be unset" + at + " (" + why + ")");
      }
    } else if (cmd == "read") {
      const auto names = operands(words, k + 1, "adinNptu", opt);
      for (const ShellWord* w : opt['a']) clobber(w, "read -a", line);
      if (names.empty() && !opt.count('a')) x_.mark_unknown("REPLY", "REPLY is set by read" + at + ", known only when it runs");
      for (const ShellWord* w : names) clobber(w, "read", line);
    } else if (cmd == "mapfile" || cmd == "readarray") {
      const auto names = operands(words, k + 1, "dnOsuCc", opt);
      if (names.empty()) x_.mark_unknown("MAPFILE", "MAPFILE is set by " + cmd + at + ", known only when it runs");
      else clobber(names.front(), cmd, line);
    } else if (cmd == "printf") {
      operands(words, k + 1, "v", opt);
      for (const ShellWord* w : opt['v']) clobber(w, "printf -v", line);
    } else if (cmd == "getopts") {
      const auto rest = operands(words, k + 1, "", opt);
      if (rest.size() >= 2) clobber(rest[1], "getopts", line);
      for (const char* name : {"OPTARG", "OPTIND"}) x_.mark_unknown(name, std::string(name) + " is set by getopts" + at + ", known only when it runs");
    } else if (cmd == "wait") {
      operands(words, k + 1, "p", opt);
      for (const ShellWord* w : opt['p']) clobber(w, "wait -p", line);
    } else if (cmd == "let") {
      for (size_t i = k + 1; i < words.size(); ++i) {
        const std::string& e = words[i].known() ? words[i].text : words[i].raw;
        arithmetic_effects(e, "let " + io::shortened(e, 40), line);
      }
    } else if (const auto f = functions_.find(cmd); f != functions_.end()) {
      call(*f->second, cmd, line);
    }
  }

  void arithmetic_effects(const std::string& expr, const std::string& shown, int line) {
    for (const auto& name : arithmetic_assignments(expr))
      x_.mark_unknown(name, name + " is changed by " + shown + " on line " + std::to_string(line) +
                                ", which stepsim does not evaluate");
  }

  // A call of a function the file defines: what its body may assign is unknown from here on (its
  // commands were listed where it is defined).
  void call(const Node& function, const std::string& name, int line) {
    if (calls_ >= kMaxFunctionCalls || call_depth_ >= kMaxNesting) {
      x_.forget_all([line](const std::string& v) {
        return v + " may be changed by the functions called on line " + std::to_string(line) +
               ", which call each other more than stepsim follows";
      });
      return;
    }
    ++calls_, ++call_depth_;
    const bool listing = std::exchange(listing_, false);
    eval_list(function.body, false,
              "set by the function " + io::shortened(name, 40) + " called on line " + std::to_string(line) +
                  ", which stepsim does not run");
    listing_ = listing;
    --call_depth_;
  }

  // Commands in order; `a && b || c` runs b and c as bash would when a's status is known (a test
  // the file decides, an assignment), and as uncertain otherwise.
  void eval_list(const List& l, bool certain, const std::string& why) {
    Truth last = Truth::True;
    for (const Node& n : l) {
      Truth gate = Truth::True;
      if (n.connector == "&&") gate = last;
      if (n.connector == "||") gate = not_(last);
      if (gate == Truth::False) continue;  // skipped; the status stays the last one run
      const bool sure = certain && gate == Truth::True;
      const std::string reason = sure || !why.empty() ? why
                                                      : "set after a test on line " + std::to_string(n.line) +
                                                            " that stepsim cannot decide from the file alone";
      const Truth result = eval_node(n, sure, reason);
      last = gate == Truth::True ? result : Truth::Unknown;
    }
  }

  // The command's exit status where the file decides it (a test, an assignment), else Unknown.
  Truth eval_node(const Node& n, bool certain, const std::string& why) {
    const std::string outer = x_.uncertain();
    x_.set_uncertain(certain ? "" : why);
    const Truth t = eval_node_in_context(n, certain, why);
    x_.set_uncertain(outer);
    return t;
  }

  Truth eval_node_in_context(const Node& n, bool certain, const std::string& why) {
    switch (n.kind) {
      case Node::Simple:
        return eval_simple(n, certain, why);
      case Node::Group: {
        // ( ... ) runs in a subshell: its commands count, its variables do not outlive it.
        std::optional<Expander::State> outside;
        if (n.subshell) outside = x_.state();
        eval_list(n.body, certain, why);
        if (outside) x_.restore(std::move(*outside));
        return Truth::Unknown;
      }
      case Node::Opaque: {
        const std::string at = " on line " + std::to_string(n.line);
        if (n.what == "function" && !n.name.empty()) functions_[n.name] = &n;
        if (n.what == "(( arithmetic ))") arithmetic_effects(n.name, "((" + io::shortened(n.name, 40) + "))", n.line);
        if (!n.name.empty() && (n.what == "for loop" || n.what == "select loop") && valid_name(n.name))
          x_.mark_unknown(n.name, n.name + " is set by the " + n.what + at + ", which stepsim does not run");
        eval_list(n.body, false, why.empty() ? "set inside the " + n.what + at + ", which stepsim does not run" : why);
        return Truth::Unknown;
      }
      case Node::If: {
        // The first branch whose condition holds runs; an undecidable one makes the rest uncertain.
        bool decided = certain;
        std::string uncertain = why;
        for (const auto& [cond, body] : n.branches) {
          if (cond.empty()) {  // else
            eval_list(body, decided, uncertain);
            return Truth::Unknown;
          }
          const Truth t = decided ? eval_condition(cond) : Truth::Unknown;
          if (t == Truth::True) {
            eval_list(body, decided, uncertain);
            return Truth::Unknown;
          }
          if (t == Truth::Unknown) {
            if (decided)
              uncertain = "set inside the if on line " + std::to_string(n.line) +
                          ", whose condition stepsim cannot decide from the file alone";
            decided = false;
            eval_list(body, false, uncertain);
          }
        }
        return Truth::Unknown;
      }
    }
    return Truth::Unknown;
  }

  static constexpr size_t kMaxFunctionCalls = 4096;  // function bodies followed for their effects

  const std::string& source_;
  Expander x_;
  std::vector<std::string> option_order_;
  ShellScript out_;
  std::map<std::string, const Node*> functions_;  // the file's functions, once defined
  bool listing_ = true;                           // false while following a call's effects
  size_t calls_ = 0, call_depth_ = 0;
};

}  // namespace

ShellScript read_shell_script(const std::string& text, const std::string& source) {
  if (text.find('\0') != std::string::npos)
    throw ConfigError(source + ": holds NUL bytes; expected a text file (a launch script or an argument list)");
  // Windows line endings: bash keeps the CR as part of the line, so a backslash no longer joins
  // the next line and every option after it is lost (the launch itself fails the same way); the
  // file is refused at the first one rather than read as something bash would not run.
  if (const size_t cr = text.find("\r\n"); cr != std::string::npos)
    throw ConfigError(source + ":" + std::to_string(1 + std::count(text.begin(), text.begin() + std::ptrdiff_t(cr), '\n')) +
                      ": a Windows line ending (CR LF), which bash does not read as a line end (a backslash "
                      "before it joins nothing); convert the file, e.g. sed -i 's/\\r$//' FILE");
  const List program = parse(lex(text, source), source);
  return Evaluator(source).run(program);
}

}  // namespace stepsim::importers
