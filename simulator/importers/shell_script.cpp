#include "simulator/importers/shell_script.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "vocabulary/config_error.hpp"
#include "simulator/io/json_text.hpp"

namespace stepsim::importers {
namespace {

// Bounds that keep a hostile file's reading finite: a launch script is a few hundred lines.
constexpr size_t kMaxTokens = 200000;
constexpr size_t kMaxNesting = 64;                    // ${...} inside ${...}, if inside if
constexpr size_t kMaxExpandedBytes = size_t(16) << 20;  // every expansion together
constexpr size_t kMaxWordsPerExpansion = 100000;

// ---------------------------------------------------------------------------------------------
// Lexing: words made of parts, operators, array assignments.

enum class PartKind { Literal, Param, Command, Arith };

struct Part {
  PartKind kind;
  std::string text;  // Literal: the characters; Param: inside ${} or the name; Arith: the expression
  bool quoted = false;
};

struct RawWord {
  std::vector<Part> parts;
  int line = 0;
  std::string raw;
};

enum class TokKind { Word, Op, Array, Newline };

struct Token {
  TokKind kind = TokKind::Word;
  RawWord word;               // Word
  std::string op;             // Op: ; ;; & && || | ( ) and "redir" for a redirection (its target follows)
  std::string name;           // Array: NAME of NAME=( ... ) or NAME+=( ... )
  bool append = false;
  std::vector<RawWord> elems;
  int line = 0;
};

class Lexer {
 public:
  Lexer(const std::string& text, const std::string& source) : s_(text), source_(source) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (pos_ < s_.size()) {
      if (out.size() > kMaxTokens) fail("more than " + std::to_string(kMaxTokens) + " words; this is no launch script");
      const char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\\' && peek(1) == '\n') {
        pos_ += 2, ++line_;
      } else if (c == '\n') {
        out.push_back(newline());
        ++pos_, ++line_;
        skip_heredocs();
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (const std::string op = operator_at(); !op.empty()) {
        Token t;
        t.kind = TokKind::Op;
        t.line = line_;
        if (op == "<<" || op == "<<-") {
          pos_ += op.size();
          read_heredoc_delimiter(op == "<<-");
          t.op = "redir-done";  // the delimiter is consumed here, not a target word
        } else {
          t.op = (op[0] == '<' || op[0] == '>' || op == "&>" || op == "&>>") ? "redir" : op;
          pos_ += op.size();
        }
        out.push_back(std::move(t));
      } else {
        out.push_back(word_or_array());
      }
    }
    out.push_back(newline());
    return out;
  }

  // The whole text as one word (the default of ${NAME:-default}, where blanks are part of it).
  RawWord word_of(int line) {
    line_ = line;
    return read_word("", true);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(source_ + ":" + std::to_string(line_) + ": " + what);
  }
  char peek(size_t k) const { return pos_ + k < s_.size() ? s_[pos_ + k] : '\0'; }

  Token newline() const {
    Token t;
    t.kind = TokKind::Newline;
    t.line = line_;
    return t;
  }

  std::string operator_at() const {
    if (pos_ >= s_.size() || std::string_view(";&|()<>").find(s_[pos_]) == std::string_view::npos) return "";
    static const char* const ops[] = {";;", "&&", "||", "&>>", "&>", ">>", ">|", ">&", "<&", "<<<", "<<-",
                                      "<<", ";",  "&",  "|",   "(",  ")",  ">",  "<"};
    for (const char* op : ops)
      if (s_.compare(pos_, std::char_traits<char>::length(op), op) == 0) return op;
    return "";
  }

  void read_heredoc_delimiter(bool strip_tabs) {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
    std::string delim;
    while (pos_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[pos_])) && s_[pos_] != ';' &&
           s_[pos_] != '&' && s_[pos_] != '|' && s_[pos_] != '<' && s_[pos_] != '>') {
      if (s_[pos_] != '\'' && s_[pos_] != '"' && s_[pos_] != '\\') delim += s_[pos_];
      ++pos_;
    }
    if (delim.empty()) fail("a here-document (<<) without its delimiter word");
    heredocs_.push_back({delim, strip_tabs});
  }

  // After a newline: the bodies of here-documents opened on the line just ended.
  void skip_heredocs() {
    for (const auto& [delim, strip_tabs] : heredocs_) {
      const int opened = line_ - 1;
      for (;;) {
        if (pos_ >= s_.size()) {
          line_ = opened;
          fail("the here-document opened here never ends (no line \"" + io::shortened(delim, 40) + "\")");
        }
        const size_t end = s_.find('\n', pos_);
        std::string_view l(s_.data() + pos_, (end == std::string::npos ? s_.size() : end) - pos_);
        if (strip_tabs)
          while (!l.empty() && l.front() == '\t') l.remove_prefix(1);
        pos_ = end == std::string::npos ? s_.size() : end + 1;
        ++line_;
        if (l == delim) break;
      }
    }
    heredocs_.clear();
  }

  Token word_or_array() {
    Token t;
    t.line = line_;
    const size_t start = pos_;
    // NAME=( ... ) and NAME+=( ... ): a bash array.
    size_t p = pos_;
    if (p < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[p])) || s_[p] == '_')) {
      while (p < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p])) || s_[p] == '_')) ++p;
      const size_t name_end = p;
      const bool append = p < s_.size() && s_[p] == '+';
      if (append) ++p;
      if (p + 1 < s_.size() && s_[p] == '=' && s_[p + 1] == '(') {
        t.kind = TokKind::Array;
        t.name = s_.substr(start, name_end - start);
        t.append = append;
        pos_ = p + 2;
        read_array(t);
        return t;
      }
    }
    t.kind = TokKind::Word;
    t.word = read_word("");
    return t;
  }

  void read_array(Token& t) {
    const int opened = line_;
    for (;;) {
      if (pos_ >= s_.size()) {
        line_ = opened;
        fail("the array " + t.name + "=( opened here is never closed with )");
      }
      const char c = s_[pos_];
      if (c == ')') {
        ++pos_;
        return;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\n') {
        ++pos_, ++line_;
      } else if (c == '\\' && peek(1) == '\n') {
        pos_ += 2, ++line_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (const std::string op = operator_at(); !op.empty()) {
        // bash refuses ; & | < > ( inside an array's parentheses.
        fail("unexpected \"" + op + "\" inside the array " + t.name + "=( ... ); quote it or close the array first");
      } else {
        if (t.elems.size() > kMaxWordsPerExpansion) fail("an array of over " + std::to_string(kMaxWordsPerExpansion) + " words");
        t.elems.push_back(read_word(")"));
      }
    }
  }

  void add_literal(RawWord& w, char c, bool quoted) {
    if (w.parts.empty() || w.parts.back().kind != PartKind::Literal || w.parts.back().quoted != quoted)
      w.parts.push_back({PartKind::Literal, "", quoted});
    w.parts.back().text += c;
  }

  // Up to the matching close bracket, counting nested opens and skipping quoted text.
  std::string balanced(char open, char close, const char* what) {
    const int opened = line_;
    int depth = 1;
    std::string out;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '\\' && pos_ + 1 < s_.size()) {
        out += c;
        out += s_[pos_ + 1];
        if (s_[pos_ + 1] == '\n') ++line_;
        pos_ += 2;
        continue;
      }
      if (c == '\'' || c == '"') {
        const size_t end = s_.find(c, pos_ + 1);
        if (end == std::string::npos) break;
        for (size_t i = pos_; i <= end; ++i) line_ += s_[i] == '\n';
        out.append(s_, pos_, end - pos_ + 1);
        pos_ = end + 1;
        continue;
      }
      if (c == '\n') ++line_;
      if (c == open) ++depth;
      if (c == close && --depth == 0) {
        ++pos_;
        return out;
      }
      out += c;
      ++pos_;
    }
    line_ = opened;
    fail(std::string("the ") + what + " opened here is never closed");
  }

  void read_dollar(RawWord& w, bool quoted) {
    ++pos_;  // the $
    const char c = peek(0);
    if (c == '(' && peek(1) == '(') {
      pos_ += 2;
      std::string e = balanced('(', ')', "$(( arithmetic");
      if (pos_ < s_.size() && s_[pos_] == ')') ++pos_;
      else fail("the $(( arithmetic opened here is never closed with ))");
      w.parts.push_back({PartKind::Arith, e, quoted});
    } else if (c == '(') {
      ++pos_;
      w.parts.push_back({PartKind::Command, balanced('(', ')', "$( command"), quoted});
    } else if (c == '{') {
      ++pos_;
      w.parts.push_back({PartKind::Param, balanced('{', '}', "${ expansion"), quoted});
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::string name;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) name += s_[pos_++];
      w.parts.push_back({PartKind::Param, name, quoted});
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '@' || c == '*' || c == '#' || c == '?' || c == '$' ||
               c == '!' || c == '-') {
      ++pos_;
      w.parts.push_back({PartKind::Param, std::string(1, c), quoted});
    } else if (c == '\'' && !quoted) {  // $'...': ANSI-C quoting
      ++pos_;
      while (pos_ < s_.size() && s_[pos_] != '\'') {
        char d = s_[pos_++];
        if (d == '\n') ++line_;
        if (d == '\\' && pos_ < s_.size()) {
          const char e = s_[pos_++];
          d = e == 'n' ? '\n' : e == 't' ? '\t' : e;
        }
        add_literal(w, d, true);
      }
      if (pos_ >= s_.size()) fail("the $'...' string opened here is never closed");
      ++pos_;
      if (w.parts.empty()) w.parts.push_back({PartKind::Literal, "", true});
    } else {
      add_literal(w, '$', quoted);
    }
  }

  // A word: up to unquoted whitespace, an operator, or one of `stop` (")" inside an array); with
  // `whole`, the rest of the text.
  RawWord read_word(const std::string& stop, bool whole = false) {
    RawWord w;
    w.line = line_;
    const size_t start = pos_;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (!whole && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) break;
      if (!whole && stop.find(c) != std::string::npos) break;
      if (c == '\\' && peek(1) == '\n') {
        pos_ += 2, ++line_;
        continue;
      }
      if (!whole && !operator_at().empty()) {
        // A digit-only word before < or > is the redirection's file descriptor: drop it.
        if ((c == '<' || c == '>') && !w.parts.empty() && w.parts.size() == 1 && w.parts[0].kind == PartKind::Literal &&
            !w.parts[0].quoted &&
            w.parts[0].text.find_first_not_of("0123456789") == std::string::npos)
          w.parts.clear();
        break;
      }
      if (c == '\'') {
        const size_t end = s_.find('\'', pos_ + 1);
        if (end == std::string::npos) fail("the single quote opened here is never closed");
        if (w.parts.empty() || end == pos_ + 1) w.parts.push_back({PartKind::Literal, "", true});
        for (size_t i = pos_ + 1; i < end; ++i) {
          line_ += s_[i] == '\n';
          add_literal(w, s_[i], true);
        }
        pos_ = end + 1;
      } else if (c == '"') {
        const int opened = line_;
        ++pos_;
        w.parts.push_back({PartKind::Literal, "", true});  // "" is a word even when empty
        while (pos_ < s_.size() && s_[pos_] != '"') {
          const char d = s_[pos_];
          if (d == '\\' && pos_ + 1 < s_.size() && std::string("$`\"\\\n").find(s_[pos_ + 1]) != std::string::npos) {
            if (s_[pos_ + 1] == '\n') ++line_;
            else add_literal(w, s_[pos_ + 1], true);
            pos_ += 2;
          } else if (d == '$') {
            read_dollar(w, true);
          } else if (d == '`') {
            ++pos_;
            w.parts.push_back({PartKind::Command, backquoted(), true});
          } else {
            line_ += d == '\n';
            add_literal(w, d, true);
            ++pos_;
          }
        }
        if (pos_ >= s_.size()) {
          line_ = opened;
          fail("the double quote opened here is never closed");
        }
        ++pos_;
      } else if (c == '$') {
        read_dollar(w, false);
      } else if (c == '`') {
        ++pos_;
        w.parts.push_back({PartKind::Command, backquoted(), false});
      } else if (c == '\\') {
        if (pos_ + 1 < s_.size()) add_literal(w, s_[pos_ + 1], true);
        pos_ += 2;
      } else {
        add_literal(w, c, false);
        ++pos_;
      }
    }
    w.raw = s_.substr(start, std::min(pos_, s_.size()) - start);
    return w;
  }

  std::string backquoted() {
    const int opened = line_;
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '`') {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) out += s_[pos_++];
      line_ += s_[pos_] == '\n';
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) {
      line_ = opened;
      fail("the backquote opened here is never closed");
    }
    ++pos_;
    return out;
  }

  const std::string& s_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<std::pair<std::string, bool>> heredocs_;
};

// ---------------------------------------------------------------------------------------------
// Parsing: commands grouped into if / loops / functions.

struct Node;
using List = std::vector<Node>;

struct Node {
  enum Kind { Simple, If, Opaque, Group } kind = Simple;
  int line = 0;
  std::string connector;       // the operator before it: "", ";", "&&", "||", "|", "&"
  bool negated = false;        // `! cmd`
  std::vector<Token> tokens;   // Simple: words and arrays, redirections removed
  std::vector<std::pair<List, List>> branches;  // If: (condition, body); an else is an empty condition
  List body;                   // Opaque (loop, function, case, arithmetic) and Group ({ } and ( ))
  std::string what;            // Opaque: "for loop", "function", ...
};

class Parser {
 public:
  Parser(std::vector<Token> toks, const std::string& source) : t_(std::move(toks)), source_(source) {}

  List parse() { return list({}, {}); }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const {
    throw ConfigError(source_ + ":" + std::to_string(line) + ": " + what);
  }
  bool at_end() const { return i_ >= t_.size(); }
  bool is_word(const std::string& w) const {
    return !at_end() && t_[i_].kind == TokKind::Word && t_[i_].word.parts.size() == 1 &&
           t_[i_].word.parts[0].kind == PartKind::Literal && !t_[i_].word.parts[0].quoted && t_[i_].word.parts[0].text == w;
  }
  bool is_op(const std::string& op) const { return !at_end() && t_[i_].kind == TokKind::Op && t_[i_].op == op; }
  void skip_separators() {
    while (!at_end() && (t_[i_].kind == TokKind::Newline || is_op(";") || is_op("&"))) ++i_;
  }

  // Commands up to one of the `end_words` (at a command's start) or `end_ops`.
  List list(const std::set<std::string>& end_words, const std::set<std::string>& end_ops) {
    if (++depth_ > kMaxNesting) fail(at_end() ? 0 : t_[i_].line, "compound commands nested over 64 deep");
    List out;
    std::string connector;
    for (;;) {
      skip_separators_keeping(connector);
      if (at_end()) break;
      bool stop = false;
      for (const auto& w : end_words) stop = stop || is_word(w);
      for (const auto& o : end_ops) stop = stop || is_op(o);
      if (stop) break;
      const size_t before = i_;
      Node n = command();
      if (i_ == before) {
        const Token& t = t_[i_];
        fail(t.line, "unexpected " + (t.kind == TokKind::Op ? "\"" + t.op + "\"" : "\"" + io::shortened(t.word.raw, 40) + "\""));
      }
      n.connector = connector;
      connector.clear();
      out.push_back(std::move(n));
      if (is_op("&&") || is_op("||") || is_op("|")) {
        connector = t_[i_].op;
        ++i_;
      }
    }
    --depth_;
    return out;
  }

  // Newlines after && || | continue the list; otherwise a ; & or newline separates commands.
  void skip_separators_keeping(std::string& connector) {
    const bool continuing = connector == "&&" || connector == "||" || connector == "|";
    while (!at_end() && (t_[i_].kind == TokKind::Newline || is_op(";") || is_op("&"))) {
      if (!continuing) connector.assign(1, ';');
      ++i_;
    }
  }

  void expect_word(const std::string& w, int line, const std::string& context) {
    skip_separators();
    if (!is_word(w)) fail(line, "the " + context + " opened here has no \"" + w + "\"");
    ++i_;
  }

  Node command() {
    Node n;
    n.line = t_[i_].line;
    bool negated = false;
    while (is_word("!")) ++i_, negated = !negated;
    if (negated) {
      if (at_end()) fail(n.line, "a ! with no command after it");
      Node inner = command();
      inner.negated = !inner.negated;
      return inner;
    }
    if (is_word("if")) {
      ++i_;
      n.kind = Node::If;
      for (;;) {
        List cond = list({"then"}, {});
        expect_word("then", n.line, "if");
        List body = list({"elif", "else", "fi"}, {});
        n.branches.emplace_back(std::move(cond), std::move(body));
        if (is_word("elif")) {
          ++i_;
          continue;
        }
        if (is_word("else")) {
          ++i_;
          n.branches.emplace_back(List{}, list({"fi"}, {}));
        }
        expect_word("fi", n.line, "if");
        return n;
      }
    }
    if (is_word("for") || is_word("while") || is_word("until") || is_word("select")) {
      n.kind = Node::Opaque;
      n.what = t_[i_].word.parts[0].text + " loop";
      ++i_;
      // The header (for: variable and list; while: its condition) up to `do`.
      List header = list({"do"}, {});
      expect_word("do", n.line, n.what);
      n.body = list({"done"}, {});
      expect_word("done", n.line, n.what);
      for (auto& h : header) n.body.push_back(std::move(h));
      return n;
    }
    if (is_word("case")) {
      n.kind = Node::Opaque;
      n.what = "case";
      ++i_;
      while (!at_end() && !is_word("in")) ++i_;
      if (at_end()) fail(n.line, "the case opened here has no \"in\"");
      ++i_;
      for (;;) {
        skip_separators();
        if (is_word("esac")) break;
        if (at_end()) fail(n.line, "the case opened here has no \"esac\"");
        while (!at_end() && !is_op(")")) ++i_;  // the pattern
        if (at_end()) fail(n.line, "the case opened here has no \"esac\"");
        ++i_;
        List item = list({"esac"}, {";;"});
        for (auto& c : item) n.body.push_back(std::move(c));
        if (is_op(";;")) ++i_;
      }
      ++i_;
      return n;
    }
    if (is_word("function") || (i_ + 2 < t_.size() && t_[i_].kind == TokKind::Word && t_[i_ + 1].kind == TokKind::Op &&
                                 t_[i_ + 1].op == "(" && t_[i_ + 2].kind == TokKind::Op && t_[i_ + 2].op == ")")) {
      n.kind = Node::Opaque;
      n.what = "function";
      if (is_word("function")) ++i_;
      ++i_;  // the name
      if (is_op("(")) i_ += 2;
      skip_separators();
      n.body = compound_body(n.line);
      return n;
    }
    if (is_word("{") || is_op("(")) {
      if (is_op("(") && i_ + 1 < t_.size() && t_[i_ + 1].kind == TokKind::Op && t_[i_ + 1].op == "(") {
        // (( arithmetic )): a test or assignment stepsim does not evaluate.
        n.kind = Node::Opaque;
        n.what = "(( arithmetic ))";
        int depth = 0;
        do {
          if (is_op("(")) ++depth;
          if (is_op(")")) --depth;
          ++i_;
        } while (!at_end() && depth > 0);
        return n;
      }
      n.kind = Node::Group;
      n.body = compound_body(n.line);
      return n;
    }
    // A simple command: words and arrays up to a separator; a redirection drops its target.
    const bool test = is_word("[[");
    while (!at_end()) {
      const Token& t = t_[i_];
      if (t.kind == TokKind::Newline) break;
      if (t.kind == TokKind::Op) {
        if (test && t.op != ";" && t.op != ";;" && t.op != "&") {  // inside [[ ]], && || ( ) < > are the test's
          Token w;
          w.kind = TokKind::Word;
          w.line = t.line;
          w.word.line = t.line;
          w.word.raw = t.op == "redir" ? "<" : t.op;
          w.word.parts.push_back({PartKind::Literal, w.word.raw, false});
          n.tokens.push_back(std::move(w));
          ++i_;
          if (n.tokens.back().word.raw == "]]") break;
          continue;
        }
        if (t.op == "redir") {
          ++i_;
          if (!at_end() && t_[i_].kind == TokKind::Word) ++i_;
          continue;
        }
        if (t.op == "redir-done") {
          ++i_;
          continue;
        }
        break;
      }
      n.tokens.push_back(t);
      ++i_;
      if (test && t.kind == TokKind::Word && t.word.raw == "]]") break;
    }
    return n;
  }

  List compound_body(int line) {
    if (is_word("{")) {
      ++i_;
      List b = list({"}"}, {});
      expect_word("}", line, "{ block");
      return b;
    }
    if (is_op("(")) {
      ++i_;
      List b = list({}, {")"});
      skip_separators();
      if (!is_op(")")) fail(line, "the ( opened here is never closed");
      ++i_;
      return b;
    }
    fail(line, "expected a { ... } body");
  }

  std::vector<Token> t_;
  const std::string& source_;
  size_t i_ = 0;
  size_t depth_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Evaluation: variables, expansions, tests.

struct Var {
  std::vector<ShellWord> elems;  // a string is one element
  bool array = false;
  std::string unknown;           // why its value is not known ("" = known)
};

enum class Truth { False, True, Unknown };

class Evaluator {
 public:
  Evaluator(const std::string& source) : source_(source) {}

  ShellScript run(const List& program) {
    eval_list(program, true, "");
    for (const auto& name : option_order_) {
      const Var& v = vars_[name];
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

  static std::vector<std::string> split_fields(const std::string& s) {
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

  void charge(size_t bytes, int line) {
    expanded_ += bytes;
    if (expanded_ > kMaxExpandedBytes)
      fail(line, "the variables expand to over 16 MiB of text; this is no launch script");
  }

  // --- variables -----------------------------------------------------------------------------

  // The value of a parameter name ($NAME, $1, $@), or nullopt with `why` when not known.
  std::optional<Var> lookup(const std::string& name, std::string& why) const {
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
      why = name + " is not set in the file (stepsim reads only the file, not the environment it runs in)";
      return std::nullopt;
    }
    if (!it->second.unknown.empty()) {
      why = it->second.unknown;
      return std::nullopt;
    }
    return it->second;
  }

  // --- expansion -----------------------------------------------------------------------------

  // One field being built while expanding a word.
  struct Field {
    std::string text;
    bool started = false;  // holds something, even an empty quoted string
    int line = 0;          // where its text is written, when it all comes from one array element
    std::string raw;       // and as written there
    std::string unknown;   // an array element only running could tell (a "$2" in ARGS=(...))
  };

  struct Expansion {
    std::vector<Field> fields{Field{}};
    std::string unknown;
  };

  static bool blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

  // Text into the word being built; `split` (an unquoted expansion) breaks it into fields at blanks.
  // `origin`: where the text was written. A field made of one array element alone shows that
  // element (its line, its raw text); one made of part of a string (a word of "$ARGS") shows that part
  // and the string's line; a whole string stays the word where it is expanded.
  void append_text(Expansion& x, const std::string& s, bool split, int line, const ShellWord* origin = nullptr,
                   bool element = false) {
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
  void append_elems(Expansion& x, const std::vector<ShellWord>& elems, bool quoted, bool as_list, int line) {
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

  static bool valid_name(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (const char c : s)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
  }

  // ${...}: the forms a launch script uses; anything else is unknown.
  void expand_param(Expansion& x, const Part& p, int line, size_t depth) {
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
      const bool set_elsewhere = !v.has_value() && vars_.count(name) && !vars_.at(name).unknown.empty();
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
      if (op == '=' && x.unknown.empty() && valid_name(name)) vars_[name] = Var{{{value, line, word_text, ""}}, false, ""};
      return;
    }
    x.unknown = "${" + io::shortened(e, 40) + "} is a string operation stepsim does not evaluate";
  }

  // The default word of ${NAME:-word}, expanded as one text; returns it.
  std::string append_default(Expansion& x, const std::string& word_text, bool quoted, int line, size_t depth) {
    if (depth > kMaxNesting) fail(line, "${...} nested over 64 deep");
    Lexer lx(word_text, source_);
    RawWord w = lx.word_of(line);
    const ShellWord v = expand_joined(w, depth + 1);
    if (!v.known()) {
      x.unknown = v.unknown;
      return "";
    }
    append_text(x, v.text, !quoted, line);
    return v.text;
  }

  // $(( )): + - * / % and parentheses over integers and variables holding integers.
  std::optional<int64_t> arith(const std::string& expr, int line, std::string& why, size_t depth) {
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

  Expansion expand(const RawWord& w, bool split, size_t depth = 0) {
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
  std::vector<ShellWord> expand_fields(const RawWord& w) {
    Expansion x = expand(w, true);
    if (!x.unknown.empty()) return {{w.raw, w.line, w.raw, x.unknown}};
    std::vector<ShellWord> out;
    for (auto& f : x.fields)
      if (f.started)
        out.push_back({std::move(f.text), f.line > 0 ? f.line : w.line, f.raw.empty() ? w.raw : f.raw, std::move(f.unknown)});
    return out;
  }

  // A word as one text (an assignment's value, a test operand).
  ShellWord expand_joined(const RawWord& w, size_t depth = 0) {
    Expansion x = expand(w, false, depth);
    for (const auto& f : x.fields)
      if (!f.unknown.empty() && x.unknown.empty()) x.unknown = f.unknown;
    if (!x.unknown.empty()) return {w.raw, w.line, w.raw, x.unknown};
    std::string text;
    for (size_t k = 0; k < x.fields.size(); ++k) text += (k ? " " : "") + x.fields[k].text;
    return {text, w.line, w.raw, ""};
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

  void assign(const std::string& name, Var v, bool append, bool certain, const std::string& uncertain_why) {
    if (!certain) {
      vars_[name] = Var{{}, v.array, uncertain_why};
      return;
    }
    Var& cur = vars_[name];
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
      for (auto& f : expand_fields(e)) {
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
    ShellWord v = expand_joined(value);
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
      words.push_back(expand_joined(t.word));
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
      if (declares || assignment_name(t.word, ignored)) continue;
      only_assignments = false;
      break;
    }
    if (only_assignments) {
      for (size_t k = declares ? 1 : 0; k < n.tokens.size(); ++k) {
        const Token& t = n.tokens[k];
        if (t.kind == TokKind::Array) assign_array(t, certain, why);
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
      for (auto& w : expand_fields(n.tokens[k].word)) c.words.push_back(std::move(w));
      if (c.words.size() > kMaxWordsPerExpansion) fail(n.line, "a command of over 100000 words");
    }
    // Tests and true/false decide branches; they launch nothing.
    static const std::set<std::string> builtins = {"[", "[[", "test", "true", "false", ":"};
    if (!c.words.empty() && !(c.words.front().known() && builtins.count(c.words.front().text)))
      out_.commands.push_back(std::move(c));
    return status;
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
    switch (n.kind) {
      case Node::Simple:
        return eval_simple(n, certain, why);
      case Node::Group:
        eval_list(n.body, certain, why);
        return Truth::Unknown;
      case Node::Opaque:
        eval_list(n.body, false,
                  why.empty() ? "set inside the " + n.what + " on line " + std::to_string(n.line) +
                                    ", which stepsim does not run"
                              : why);
        return Truth::Unknown;
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

  const std::string& source_;
  std::map<std::string, Var> vars_;
  std::vector<std::string> option_order_;
  size_t expanded_ = 0;
  ShellScript out_;
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
  Lexer lexer(text, source);
  Parser parser(lexer.run(), source);
  const List program = parser.parse();
  return Evaluator(source).run(program);
}

}  // namespace stepsim::importers
