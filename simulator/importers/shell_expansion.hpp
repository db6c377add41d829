// The shell reader's expansions (simulator/importers/shell_script.hpp): the variables a script sets
// and how a word expands against them, as bash would: $NAME, ${NAME[@]}, ${NAME:-default} and its
// relatives, ${#NAME}, integer $(( )), quoting and field splitting. What only running could tell
// (a command's output, a variable the file never sets) expands to a word marked unknown with the
// reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "simulator/importers/shell_lexer.hpp"
#include "simulator/importers/shell_script.hpp"

namespace stepsim::importers::shell {

struct Var {
  std::vector<ShellWord> elems;  // a string is one element
  bool array = false;
  std::string unknown;           // why its value is not known ("" = known)
};

// A bash name: a letter or _, then letters, digits and _.
bool valid_name(const std::string& s);

// Fields of `s` split at blanks, as an unquoted expansion splits them.
std::vector<std::string> split_fields(const std::string& s);

class Expander {
 public:
  explicit Expander(const std::string& source) : source_(source) {}

  // The script's variables by name (set by the evaluator; ${NAME:=word} sets one too).
  std::map<std::string, Var>& vars() { return vars_; }

  // What a command may do to variables besides NAME=value. `unset` certainly run: the name is
  // unset (a ${NAME:-default} after it takes the default). `mark_unknown`: its value is unknown
  // from here on, for `why`. `forget_all`: any variable may have changed (an eval or a sourced
  // file): each one set so far, and any other name asked for later, is unknown for `why_of(name)`.
  void unset(const std::string& name, int line);
  void mark_unknown(const std::string& name, const std::string& why);
  void forget_all(const std::function<std::string(const std::string&)>& why_of);

  // While expanding inside a branch that may not run, `why` (empty where it certainly runs): a
  // ${NAME:=word} there leaves NAME unknown.
  void set_uncertain(std::string why) { uncertain_ = std::move(why); }
  const std::string& uncertain() const { return uncertain_; }

  // Everything the variables hold, to put back after a subshell `( ... )`.
  struct State {
    std::map<std::string, Var> vars;
    std::map<std::string, int> unset_lines;
    std::function<std::string(const std::string&)> changed_by;
  };
  State state() const { return {vars_, unset_lines_, changed_by_}; }
  void restore(State s);

  // The value of a parameter name ($NAME, $1, $@), or nullopt with `why` when not known.
  std::optional<Var> lookup(const std::string& name, std::string& why) const;

  // A word as bash passes it to a command: zero or more fields.
  std::vector<ShellWord> expand_fields(const RawWord& w);

  // A word as one text (an assignment's value, a test operand).
  ShellWord expand_joined(const RawWord& w, size_t depth = 0);

 private:
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

  [[noreturn]] void fail(int line, const std::string& what) const;
  void charge(size_t bytes, int line);
  void append_text(Expansion& x, const std::string& s, bool split, int line, const ShellWord* origin = nullptr,
                   bool element = false);
  void append_elems(Expansion& x, const std::vector<ShellWord>& elems, bool quoted, bool as_list, int line);
  void expand_param(Expansion& x, const Part& p, int line, size_t depth);
  std::string append_default(Expansion& x, const std::string& word_text, bool quoted, int line, size_t depth);
  std::optional<int64_t> arith(const std::string& expr, int line, std::string& why, size_t depth);
  Expansion expand(const RawWord& w, bool split, size_t depth = 0);

  // Whether `name`, not known, may hold a value (set to something unknown, or by an eval).
  bool maybe_set(const std::string& name) const;
  void mark_arithmetic_assignments(const std::string& expr, int line);

  const std::string& source_;
  std::map<std::string, Var> vars_;
  std::map<std::string, int> unset_lines_;  // names unset by `unset`, and where
  std::function<std::string(const std::string&)> changed_by_;  // after forget_all: why a name is unknown
  std::string uncertain_;
  size_t expanded_ = 0;
};

}  // namespace stepsim::importers::shell
