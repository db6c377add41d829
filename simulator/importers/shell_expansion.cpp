#include "simulator/importers/shell_expansion.hpp"

#include <cctype>
#include <functional>

#include "simulator/io/json_text.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::importers::shell {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

}  // namespace

std::vector<std::string> split_fields(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  bool in = false;
  for (const char c : s) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in) out.push_back(std::move(cur)), cur.clear();
      in = false;
    } else {
      cur += c, in = true;
    }
  }
  if (in) out.push_back(std::move(cur));
  return out;
}

void Expander::fail(int line, const std::string& what) const {
  throw ConfigError(source_ + ":" + std::to_string(line) + ": " + what);
}

void Expander::unset(const std::string& name, int line) {
  vars_.erase(name);
  unset_lines_[name] = line;
}

void Expander::mark_unknown(const std::string& name, const std::string& why) {
  vars_[name] = Var{{}, false, why};
  unset_lines_.erase(name);
}

void Expander::forget_all(const std::function<std::string(const std::string&)>& why_of) {
  for (auto& [name, v] : vars_) v = Var{{}, v.array, why_of(name)};
  unset_lines_.clear();
  changed_by_ = why_of;
}

void Expander::restore(State s) {
  vars_ = std::move(s.vars);
  unset_lines_ = std::move(s.unset_lines);
  changed_by_ = std::move(s.changed_by);
}

bool Expander::maybe_set(const std::string& name) const {
  if (const auto it = vars_.find(name); it != vars_.end()) return !it->second.unknown.empty();
  return valid_name(name) && !unset_lines_.count(name) && changed_by_ != nullptr;
}

// $(( x++ )), $(( x = 1 )): bash changes x as it expands; stepsim does not evaluate assignments.
void Expander::mark_arithmetic_assignments(const std::string& expr, int line) {
  for (const auto& name : arithmetic_assignments(expr))
    mark_unknown(name, name + " is changed by $((" + io::shortened(expr, 40) + ")) on line " + std::to_string(line) +
                           ", which stepsim does not evaluate");
}

void Expander::charge(size_t bytes, int line) {
  expanded_ += bytes;
  if (expanded_ > kMaxExpandedBytes)
    fail(line, "the variables expand to over 16 MiB of text; this is no launch script");
}

// The value of a parameter name ($NAME, $1, $@), or nullopt with `why` when not known.
std::optional<Var> Expander::lookup(const std::string& name, std::string& why) const {
  if (name.size() == 1 && std::isdigit(static_cast<unsigned char>(name[0]))) {
    why = name == "0" ? "$0 is the script's own path, known only when it runs"
                      : "$" + name + " is an argument given to the script when it runs";
    return std::nullopt;
  }
  if (name == "@" || name == "*" || name == "#") {
    why = "$" + name + " holds the script's own arguments, known only when it runs";
    return std::nullopt;
  }
  if (name == "?" || name == "$" || name == "!" || name == "-") {
    why = "$" + name + " is known only when the script runs";
    return std::nullopt;
  }
  const auto it = vars_.find(name);
  if (it == vars_.end()) {
    if (const auto u = unset_lines_.find(name); u != unset_lines_.end())
      why = name + " is unset on line " + std::to_string(u->second);
    else if (changed_by_ != nullptr && valid_name(name))
      why = changed_by_(name);
    else
      why = name + " is not set in the file (stepsim reads only the file, not the environment it runs in)";
    return std::nullopt;
  }
  if (!it->second.unknown.empty()) {
    why = it->second.unknown;
    return std::nullopt;
  }
  return it->second;
}

// Text into the word being built; `split` (an unquoted expansion) breaks it into fields at blanks.
// `origin`: where the text was written. A field made of one array element alone shows that
// element (its line, its raw text); one made of part of a string (a word of "$ARGS") shows that part
// and the string's line; a whole string stays the word where it is expanded.
void Expander::append_text(Expansion& x, const std::string& s, bool split, int line, const ShellWord* origin,
                           bool element) {
  charge(s.size(), line);
  const auto mark = [&](const std::string& piece) {
    if (!x.fields.back().started && origin != nullptr && (element || piece.size() != s.size())) {
      x.fields.back().line = origin->line;
      x.fields.back().raw = piece.size() == s.size() ? origin->raw : piece;
    }
    x.fields.back().started = true;
  };
  if (!split) {
    mark(s);
    x.fields.back().text += s;
    return;
  }
  size_t i = 0;
  while (i < s.size()) {
    if (blank(s[i])) {
      if (x.fields.back().started) x.fields.push_back({});
      while (i < s.size() && blank(s[i])) ++i;
      if (x.fields.size() > kMaxWordsPerExpansion) fail(line, "an expansion of over 100000 words");
      continue;
    }
    size_t j = i;
    while (j < s.size() && !blank(s[j])) ++j;
    mark(s.substr(i, j - i));
    x.fields.back().text.append(s, i, j - i);
    i = j;
  }
}

// Appends a variable's elements: quoted "${A[@]}" keeps them apart, unquoted splits each.
// An element that is unknown stays one unknown word of the list; joined into one text it makes
// the whole word unknown.
void Expander::append_elems(Expansion& x, const std::vector<ShellWord>& elems, bool quoted, bool as_list, int line) {
  if (!as_list) {  // "${A[*]}" or a string: one text joined by spaces
    std::string joined;
    for (size_t k = 0; k < elems.size(); ++k) {
      if (!elems[k].known()) {
        x.unknown = elems[k].unknown;
        return;
      }
      joined.append(k ? " " : "").append(elems[k].text);
    }
    append_text(x, joined, !quoted, line, elems.size() == 1 ? &elems[0] : nullptr);
    return;
  }
  for (size_t k = 0; k < elems.size(); ++k) {
    if (k > 0 && (quoted || x.fields.back().started)) x.fields.push_back({});
    if (!elems[k].known()) {
      if (x.fields.back().started) x.fields.push_back({});
      Field& f = x.fields.back();
      f.text = elems[k].raw, f.started = true, f.line = elems[k].line, f.raw = elems[k].raw, f.unknown = elems[k].unknown;
      x.fields.push_back({});
      continue;
    }
    append_text(x, elems[k].text, !quoted, line, &elems[k], true);
  }
}

bool valid_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// ${...}: the forms a launch script uses; anything else is unknown.
void Expander::expand_param(Expansion& x, const Part& p, int line, size_t depth) {
  const std::string& e = p.text;
  std::string why;
  if (p.kind == PartKind::Param && e.empty()) {
    x.unknown = "${} is a bad substitution";
    return;
  }
  // $NAME, $1, ${NAME}
  if (valid_name(e) || (e.size() == 1 && !std::isalpha(static_cast<unsigned char>(e[0])))) {
    const auto v = lookup(e, why);
    if (!v) {
      x.unknown = why;
      return;
    }
    append_elems(x, v->elems.empty() ? std::vector<ShellWord>{} : std::vector<ShellWord>{v->elems.front()}, p.quoted,
                 false, line);
    return;
  }
  // ${#NAME}, ${#NAME[@]}
  if (e[0] == '#') {
    std::string name = e.substr(1);
    bool count = false;
    if (name.size() > 3 && (name.ends_with("[@]") || name.ends_with("[*]"))) name.resize(name.size() - 3), count = true;
    if (!valid_name(name)) {
      x.unknown = "${" + e + "} is a string operation stepsim does not evaluate";
      return;
    }
    const auto v = lookup(name, why);
    if (!v) {
      x.unknown = why;
      return;
    }
    const size_t n = count ? v->elems.size() : (v->elems.empty() ? 0 : v->elems.front().text.size());
    append_text(x, std::to_string(n), false, line);
    return;
  }
  // ${NAME[@]}, ${NAME[*]}, ${NAME[N]}
  if (const auto b = e.find('['); b != std::string::npos && e.back() == ']' && valid_name(e.substr(0, b))) {
    const std::string name = e.substr(0, b), index = e.substr(b + 1, e.size() - b - 2);
    const auto v = lookup(name, why);
    if (!v) {
      x.unknown = why;
      return;
    }
    if (index == "@" || index == "*") {
      append_elems(x, v->elems, p.quoted, index == "@", line);
      return;
    }
    if (!index.empty() && index.size() < 9 && index.find_first_not_of("0123456789") == std::string::npos) {
      const size_t k = std::stoul(index);
      append_elems(x, k < v->elems.size() ? std::vector<ShellWord>{v->elems[k]} : std::vector<ShellWord>{}, p.quoted,
                   false, line);
      return;
    }
    x.unknown = "${" + e + "} indexes an array with an expression stepsim does not evaluate";
    return;
  }
  // ${NAME:-word} and its relatives.
  size_t n = 0;
  while (n < e.size() && (std::isalnum(static_cast<unsigned char>(e[n])) || e[n] == '_')) ++n;
  const std::string name = e.substr(0, n);
  const bool colon = n < e.size() && e[n] == ':';
  const size_t opi = n + (colon ? 1 : 0);
  if ((valid_name(name) || (name.size() == 1 && std::isdigit(static_cast<unsigned char>(name[0])))) && opi < e.size() &&
      std::string("-=+?").find(e[opi]) != std::string::npos) {
    const char op = e[opi];
    const std::string word_text = e.substr(opi + 1);
    const auto v = lookup(name, why);
    // Not set in the file counts as unset: the file's own default stands for it.
    const bool is_set = v.has_value() && !(colon && (v->elems.empty() || v->elems.front().text.empty()));
    const bool set_elsewhere = !v.has_value() && maybe_set(name);
    if (set_elsewhere) {  // set in the file to something unknown: neither branch is known
      x.unknown = why;
      return;
    }
    if (op == '+') {
      if (is_set) append_default(x, word_text, p.quoted, line, depth);
      return;
    }
    if (is_set) {
      append_elems(x, {v->elems.front()}, p.quoted, false, line);
      return;
    }
    if (op == '?') {
      x.unknown = name + " must be set when the script runs (${" + e + "})";
      return;
    }
    const std::string value = append_default(x, word_text, p.quoted, line, depth);
    if (op == '=' && valid_name(name)) {
      // ${NAME:=word} assigns as it expands: unknown where the word is, or where it may not run.
      if (!x.unknown.empty())
        mark_unknown(name, name + " = ${" + io::shortened(e, 40) + "} (line " + std::to_string(line) + "), where " +
                               x.unknown);
      else if (!uncertain_.empty())
        mark_unknown(name, name + " is " + uncertain_);
      else
        vars_[name] = Var{{{value, line, word_text, ""}}, false, ""};
    }
    return;
  }
  x.unknown = "${" + io::shortened(e, 40) + "} is a string operation stepsim does not evaluate";
}

// The default word of ${NAME:-word}, expanded as one text; returns it.
std::string Expander::append_default(Expansion& x, const std::string& word_text, bool quoted, int line, size_t depth) {
  if (depth > kMaxNesting) fail(line, "${...} nested over 64 deep");
  RawWord w = lex_whole_word(word_text, source_, line);
  const ShellWord v = expand_joined(w, depth + 1);
  if (!v.known()) {
    x.unknown = v.unknown;
    return "";
  }
  append_text(x, v.text, !quoted, line);
  return v.text;
}

// $(( )): + - * / % and parentheses over integers and variables holding integers.
std::optional<int64_t> Expander::arith(const std::string& expr, int line, std::string& why, size_t depth) {
  if (depth > kMaxNesting) fail(line, "$(( )) nested over 64 deep");
  size_t i = 0;
  std::function<std::optional<int64_t>()> sum, product, unary;
  const auto skip = [&] {
    while (i < expr.size() && std::isspace(static_cast<unsigned char>(expr[i]))) ++i;
  };
  const auto unknown = [&](const std::string& w) -> std::optional<int64_t> {
    if (why.empty()) why = w;
    return std::nullopt;
  };
  int nest = 0;
  unary = [&]() -> std::optional<int64_t> {
    skip();
    if (i >= expr.size()) return unknown("$((" + io::shortened(expr, 40) + ")) is incomplete");
    const char c = expr[i];
    if (c == '-' || c == '+') {
      // Signs in a row, counted rather than recursed into (a file of a million '-').
      bool minus = false;
      while (i < expr.size() && (expr[i] == '-' || expr[i] == '+' || std::isspace(static_cast<unsigned char>(expr[i])))) {
        if (expr[i] == '-') minus = !minus;
        ++i;
      }
      const auto v = unary();
      if (!v) return v;
      if (minus && *v == INT64_MIN) return unknown("$((" + io::shortened(expr, 40) + ")) overflows");
      return minus ? -*v : *v;
    }
    if (c == '(') {
      if (++nest > 64) return unknown("$(( )) nested over 64 deep");
      ++i;
      const auto v = sum();
      skip();
      if (i >= expr.size() || expr[i] != ')') return unknown("$((" + io::shortened(expr, 40) + ")) has unbalanced parentheses");
      ++i, --nest;
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (i < expr.size() && std::isdigit(static_cast<unsigned char>(expr[i]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, expr[i] - '0', &v))
          return unknown("$((" + io::shortened(expr, 40) + ")) overflows");
        ++i;
      }
      if (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '#'))
        return unknown("$((" + io::shortened(expr, 40) + ")) uses a number base stepsim does not evaluate");
      return v;
    }
    // A variable: NAME, $NAME or ${NAME}.
    size_t start = i;
    if (c == '$') ++i, ++start;
    const bool braced = i < expr.size() && expr[i] == '{';
    if (braced) ++i, ++start;
    while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '_')) ++i;
    const std::string name = expr.substr(start, i - start);
    if (braced) {
      if (i >= expr.size() || expr[i] != '}') return unknown("$((" + io::shortened(expr, 40) + ")) uses ${...} forms stepsim does not evaluate");
      ++i;
    }
    if (name.empty()) return unknown("$((" + io::shortened(expr, 40) + ")) uses operators stepsim does not evaluate");
    std::string w;
    const auto v = lookup(name, w);
    if (!v) return unknown(w);
    if (!v->elems.empty() && !v->elems.front().known()) return unknown(v->elems.front().unknown);
    const std::string text = v->elems.empty() ? "" : v->elems.front().text;
    // bash evaluates a variable's text as an expression; a plain integer is what launch scripts hold.
    if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
      return unknown(name + " = \"" + io::shortened(text, 40) + "\" is not an integer stepsim can use in $(( ))");
    return int64_t(std::stoll(text));
  };
  product = [&]() -> std::optional<int64_t> {
    auto v = unary();
    for (;;) {
      skip();
      if (!v || i >= expr.size() || std::string("*/%").find(expr[i]) == std::string::npos) return v;
      const char op = expr[i++];
      if (op == '*' && i < expr.size() && expr[i] == '*') return unknown("$((" + io::shortened(expr, 40) + ")) uses ** which stepsim does not evaluate");
      const auto r = unary();
      if (!r) return r;
      if (op == '*') {
        if (__builtin_mul_overflow(*v, *r, &*v)) return unknown("$((" + io::shortened(expr, 40) + ")) overflows");
      } else {
        if (*r == 0) return unknown("$((" + io::shortened(expr, 40) + ")) divides by zero");
        if (*v == INT64_MIN && *r == -1) return unknown("$((" + io::shortened(expr, 40) + ")) overflows");
        v = op == '/' ? *v / *r : *v % *r;
      }
    }
  };
  sum = [&]() -> std::optional<int64_t> {
    auto v = product();
    for (;;) {
      skip();
      if (!v || i >= expr.size() || (expr[i] != '+' && expr[i] != '-')) return v;
      const char op = expr[i++];
      const auto r = product();
      if (!r) return r;
      if (op == '+' ? __builtin_add_overflow(*v, *r, &*v) : __builtin_sub_overflow(*v, *r, &*v))
        return unknown("$((" + io::shortened(expr, 40) + ")) overflows");
    }
  };
  const auto v = sum();
  skip();
  if (v && i < expr.size()) return unknown("$((" + io::shortened(expr, 40) + ")) uses operators stepsim does not evaluate");
  return v;
}

Expander::Expansion Expander::expand(const RawWord& w, bool split, size_t depth) {
  Expansion x;
  for (const Part& p : w.parts) {
    switch (p.kind) {
      case PartKind::Literal:
        charge(p.text.size(), w.line);
        x.fields.back().text += p.text;
        x.fields.back().started = true;
        break;
      case PartKind::Param:
        expand_param(x, Part{p.kind, p.text, p.quoted || !split}, w.line, depth);
        break;
      case PartKind::Command:
        x.unknown = "$(" + io::shortened(p.text, 40) + ") is the output of a command, which stepsim does not run";
        break;
      case PartKind::Arith: {
        std::string why;
        const auto v = arith(p.text, w.line, why, depth);
        mark_arithmetic_assignments(p.text, w.line);
        if (!v) x.unknown = why;
        else append_text(x, std::to_string(*v), false, w.line);
        break;
      }
    }
    if (!x.unknown.empty()) break;
  }
  return x;
}

// A word as bash passes it to a command: zero or more fields.
std::vector<ShellWord> Expander::expand_fields(const RawWord& w) {
  Expansion x = expand(w, true);
  if (!x.unknown.empty()) return {{w.raw, w.line, w.raw, x.unknown}};
  std::vector<ShellWord> out;
  for (auto& f : x.fields)
    if (f.started)
      out.push_back({std::move(f.text), f.line > 0 ? f.line : w.line, f.raw.empty() ? w.raw : f.raw, std::move(f.unknown)});
  return out;
}

// A word as one text (an assignment's value, a test operand).
ShellWord Expander::expand_joined(const RawWord& w, size_t depth) {
  Expansion x = expand(w, false, depth);
  for (const auto& f : x.fields)
    if (!f.unknown.empty() && x.unknown.empty()) x.unknown = f.unknown;
  if (!x.unknown.empty()) return {w.raw, w.line, w.raw, x.unknown};
  std::string text;
  for (size_t k = 0; k < x.fields.size(); ++k) text += (k ? " " : "") + x.fields[k].text;
  return {text, w.line, w.raw, ""};
}

}  // namespace stepsim::importers::shell
