// The shell reader's first pass (simulator/importers/shell_script.hpp): a bash launch script cut
// into words made of parts (literal text, $NAME and ${...}, $( ), $(( ))), operators and array
// assignments NAME=( ... ), with comments, line continuations and here-document bodies dropped.
// Nothing is expanded here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stepsim::importers::shell {

// Bounds that keep a hostile file's reading finite: a launch script is a few hundred lines.
constexpr size_t kMaxTokens = 200000;
constexpr size_t kMaxNesting = 64;                    // ${...} inside ${...}, if inside if
constexpr size_t kMaxExpandedBytes = size_t(16) << 20;  // every expansion together
constexpr size_t kMaxWordsPerExpansion = 100000;

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

enum class TokKind { Word, Op, Array, Newline, Arith };

struct Token {
  TokKind kind = TokKind::Word;
  RawWord word;               // Word
  std::string op;             // Op: ; ;; & && || | ( ) and "redir" for a redirection (its target follows)
  std::string name;           // Array: NAME of NAME=( ... ) or NAME+=( ... ); Arith: the expression of (( ))
  bool append = false;
  std::vector<RawWord> elems;
  int line = 0;
  std::vector<std::string> assigns;  // "redir-done": names its here-document's body may assign
};

// The file's tokens, ending with a newline token. Throws ConfigError ("SOURCE:LINE: ...") on text
// bash would refuse (an unterminated quote, an unclosed array) or over the bounds above.
std::vector<Token> lex(const std::string& text, const std::string& source);

// Names an arithmetic expression assigns (x=1, x+=2, x++, --x, a[i]=3: x, x, x, x, a), as bash
// would change them when it evaluates the expression.
std::vector<std::string> arithmetic_assignments(std::string_view expr);

// Names the expansions in `text` may assign when bash expands it: ${NAME:=word}, ${NAME=word} and
// the assignments of every $(( )) in it.
std::vector<std::string> expansion_assignments(std::string_view text);

// `text` as one word, blanks included (the default of ${NAME:-default}), as if written at `line`.
RawWord lex_whole_word(const std::string& text, const std::string& source, int line);

}  // namespace stepsim::importers::shell
