#include "simulator/importers/shell_lexer.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

#include "simulator/io/json_text.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim::importers::shell {
namespace {

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
        skip_heredocs(out);
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (c == '(' && peek(1) == '(' && at_command_start(out) && arithmetic_command(out)) {
        // (( expression )): read whole, as bash reads it, not as two subshells
      } else if (const std::string op = operator_at(); !op.empty()) {
        Token t;
        t.kind = TokKind::Op;
        t.line = line_;
        if (op == "<<" || op == "<<-") {
          pos_ += op.size();
          read_heredoc_delimiter(op == "<<-", out.size());
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

  // `token`: the index the here-document's "redir-done" token will have.
  void read_heredoc_delimiter(bool strip_tabs, size_t token) {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
    std::string delim;
    bool quoted = false;
    while (pos_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[pos_])) && s_[pos_] != ';' &&
           s_[pos_] != '&' && s_[pos_] != '|' && s_[pos_] != '<' && s_[pos_] != '>') {
      if (s_[pos_] != '\'' && s_[pos_] != '"' && s_[pos_] != '\\') delim += s_[pos_];
      else quoted = true;
      ++pos_;
    }
    if (delim.empty()) fail("a here-document (<<) without its delimiter word");
    heredocs_.push_back({delim, strip_tabs, quoted, token});
  }

  // After a newline: the bodies of here-documents opened on the line just ended. An unquoted
  // delimiter's body is expanded when it runs: the names its ${NAME:=...} and $(( )) may assign
  // go on its token.
  void skip_heredocs(std::vector<Token>& out) {
    for (const auto& doc : heredocs_) {
      const int opened = line_ - 1;
      const size_t body = pos_;
      for (;;) {
        if (pos_ >= s_.size()) {
          line_ = opened;
          fail("the here-document opened here never ends (no line \"" + io::shortened(doc.delim, 40) + "\")");
        }
        const size_t end = s_.find('\n', pos_);
        std::string_view l(s_.data() + pos_, (end == std::string::npos ? s_.size() : end) - pos_);
        if (doc.strip_tabs)
          while (!l.empty() && l.front() == '\t') l.remove_prefix(1);
        const size_t line_start = pos_;
        pos_ = end == std::string::npos ? s_.size() : end + 1;
        ++line_;
        if (l == doc.delim) {
          if (!doc.quoted && doc.token < out.size())
            for (auto& name : expansion_assignments(std::string_view(s_).substr(body, line_start - body)))
              out[doc.token].assigns.push_back(std::move(name));
          break;
        }
      }
    }
    heredocs_.clear();
  }

  // Whether a "((" here starts a command (after a separator or a reserved word), where bash reads
  // it as an arithmetic command.
  static bool at_command_start(const std::vector<Token>& out) {
    if (out.empty()) return true;
    const Token& t = out.back();
    if (t.kind == TokKind::Newline) return true;
    if (t.kind == TokKind::Op) return t.op != "redir" && t.op != "redir-done" && t.op != ")";
    if (t.kind != TokKind::Word || t.word.parts.size() != 1 || t.word.parts[0].quoted) return false;
    static const char* const reserved[] = {"then", "do", "else", "elif", "if", "while", "until", "for", "{", "!", "time"};
    for (const char* r : reserved)
      if (t.word.parts[0].text == r) return true;
    return false;
  }

  // (( expression )) up to its matching "))": one Arith token, true; false (nothing read) when
  // the parentheses do not close that way, e.g. nested subshells "((cd a; ls) )".
  bool arithmetic_command(std::vector<Token>& out) {
    int depth = 0;
    for (size_t i = pos_ + 2; i < s_.size(); ++i) {
      const char c = s_[i];
      if (c == '(') ++depth;
      if (c != ')') continue;
      if (depth-- > 0) continue;
      if (i + 1 >= s_.size() || s_[i + 1] != ')') return false;
      Token t;
      t.kind = TokKind::Arith;
      t.line = line_;
      t.name = s_.substr(pos_ + 2, i - pos_ - 2);
      for (const char d : t.name) line_ += d == '\n';
      pos_ = i + 2;
      out.push_back(std::move(t));
      return true;
    }
    return false;
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
  struct HereDoc {
    std::string delim;
    bool strip_tabs = false;
    bool quoted = false;  // 'EOF' or "EOF": the body is not expanded
    size_t token = 0;     // its "redir-done" token
  };
  std::vector<HereDoc> heredocs_;
};
bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::vector<std::string> arithmetic_assignments(std::string_view e) {
  std::vector<std::string> out;
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
  for (size_t i = 0; i < e.size();) {
    // A name (not the tail of a number such as 0x1f or 16#ff).
    if (!name_start(e[i]) || (i > 0 && (name_char(e[i - 1]) || e[i - 1] == '#'))) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < e.size() && name_char(e[i])) ++i;
    const std::string name(e.substr(start, i - start));
    size_t j = i;
    if (j < e.size() && e[j] == '[') {  // a[i] = ...: the array is assigned
      int depth = 0;
      for (; j < e.size(); ++j) {
        if (e[j] == '[') ++depth;
        if (e[j] == ']' && --depth == 0) break;
      }
      j = std::min(e.size(), j + 1);
    }
    while (j < e.size() && space(e[j])) ++j;
    size_t k = start;
    while (k > 0 && space(e[k - 1])) --k;
    const std::string_view after = e.substr(j), before = e.substr(0, k);
    bool assigned = after.starts_with("++") || after.starts_with("--") || before.ends_with("++") || before.ends_with("--");
    if (!assigned && !after.empty() && after[0] == '=' && !after.starts_with("==")) assigned = true;
    for (const char* op : {"+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="})
      assigned = assigned || after.starts_with(op);
    if (assigned && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

std::vector<std::string> expansion_assignments(std::string_view t) {
  std::vector<std::string> out;
  const auto add = [&](std::string name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  };
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i] != '$') continue;
    if (t.compare(i + 1, 2, "((") == 0) {  // $(( ... )): to the matching ))
      int depth = 0;
      size_t j = i + 3;
      for (; j < t.size(); ++j) {
        if (t[j] == '(') ++depth;
        if (t[j] == ')' && depth-- == 0) break;
      }
      for (auto& name : arithmetic_assignments(t.substr(i + 3, std::min(j, t.size()) - (i + 3)))) add(std::move(name));
    } else if (t[i + 1] == '{') {  // ${NAME:=word}, ${NAME=word}
      size_t j = i + 2;
      while (j < t.size() && name_char(t[j])) ++j;
      if (j > i + 2 && name_start(t[i + 2]) &&
          (t.substr(j).starts_with(":=") || t.substr(j).starts_with("=")))
        add(std::string(t.substr(i + 2, j - i - 2)));
    }
  }
  return out;
}

std::vector<Token> lex(const std::string& text, const std::string& source) { return Lexer(text, source).run(); }

RawWord lex_whole_word(const std::string& text, const std::string& source, int line) {
  return Lexer(text, source).word_of(line);
}

}  // namespace stepsim::importers::shell
