#include "simulator/importers/shell_parser.hpp"

#include <set>

#include "simulator/io/json_text.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::importers::shell {
namespace {

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
        const std::string what = t.kind == TokKind::Op ? t.op : io::shortened(t.word.raw, 40);
        fail(t.line, "unexpected \"" + what + "\"");
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
      // for NAME in ...; select NAME in ...: the loop sets NAME.
      if ((n.what == "for loop" || n.what == "select loop") && !at_end() && t_[i_].kind == TokKind::Word &&
          t_[i_].word.parts.size() == 1 && t_[i_].word.parts[0].kind == PartKind::Literal)
        n.name = t_[i_].word.parts[0].text;
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
      if (!at_end() && t_[i_].kind == TokKind::Word) n.name = t_[i_].word.raw;
      ++i_;  // the name
      if (is_op("(")) i_ += 2;
      skip_separators();
      n.body = compound_body(n.line);
      return n;
    }
    if (!at_end() && t_[i_].kind == TokKind::Arith) {  // (( expression ))
      n.kind = Node::Opaque;
      n.what = "(( arithmetic ))";
      n.name = t_[i_].name;
      ++i_;
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
      n.subshell = is_op("(");
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
          n.assigns.insert(n.assigns.end(), t.assigns.begin(), t.assigns.end());
          ++i_;
          continue;
        }
        // bash: "syntax error near unexpected token `('" (a value such as ([0]*3+[1]*58) left bare).
        if (t.op == "(" && !n.tokens.empty())
          fail(t.line, "an unquoted ( among a command's arguments is a shell syntax error; quote that argument "
                       "(e.g. \"([0]*3+[1]*58)\")");
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
}  // namespace

List parse(std::vector<Token> tokens, const std::string& source) { return Parser(std::move(tokens), source).parse(); }

}  // namespace stepsim::importers::shell
