// Reads a bash launch script the way bash would expand it, without running anything: line
// continuations, comments, quotes, variables set in the file (`NAME=value`, `export`, arrays
// `NAME=( ... )` and `NAME+=( ... )`, `${NAME:-default}`), integer `$(( ))` arithmetic, and `if`
// tests on strings and integers the file decides. What only running could tell (a command's output
// `$(...)`, a variable the file never sets, a test on a file, a variable `read`, `eval`, a sourced
// file, `let` or a called function may change) stays marked unknown with the reason, so a caller can
// refuse it where it matters and ignore it where it does not. The seams: shell_lexer (words),
// shell_parser (commands), shell_expansion (variables and ${...}), shell_script.cpp (evaluation).
#pragma once

#include <string>
#include <vector>

namespace stepsim::importers {

// One word of a command after expansion.
struct ShellWord {
  std::string text;     // the expanded text (what bash would pass), or the raw text when unknown
  int line = 0;         // where it is written in the file (an array element: where the element is)
  std::string raw;      // as written, e.g. "$NUM_LAYERS" or "--seq-length=${SEQ}"
  std::string unknown;  // empty when known; else why not ("NUM_LAYERS is not set in the file")
  bool known() const { return unknown.empty(); }
};

// A simple command (its words, assignments and redirections removed) that the file runs, or might
// run: commands inside `if` branches the file cannot decide, loops and functions are listed too,
// with `certain` false.
struct ShellCommand {
  std::vector<ShellWord> words;
  int line = 0;
  bool certain = true;
};

struct ShellScript {
  std::vector<ShellCommand> commands;
  // Arrays and strings whose value starts with an option ("--num-layers ..."), in the order the
  // file assigns them: the arguments of a file that holds them without a launch line.
  std::vector<std::vector<ShellWord>> option_lists;
  // Code the file runs that stepsim does not read, in order: "the file sourced on line 3
  // (env.sh)", "the eval on line 9". After one, any variable may have changed.
  std::vector<std::string> unread;
};

// `source` names the file in messages. Throws ConfigError ("SOURCE:LINE: ...") on text bash would
// refuse (an unterminated quote, an unclosed array) or that exceeds the reader's bounds.
ShellScript read_shell_script(const std::string& text, const std::string& source);

}  // namespace stepsim::importers
