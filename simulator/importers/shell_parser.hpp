// The shell reader's second pass (simulator/importers/shell_script.hpp): tokens grouped into the
// commands of a script, with `if` branches, loops, functions, `case`, `(( ))` and { } / ( ) groups.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "simulator/importers/shell_lexer.hpp"

namespace stepsim::importers::shell {

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
  std::string name;            // Opaque: the function's name, the for / select loop's variable, the
                               // (( )) command's expression
  bool subshell = false;       // Group: ( ... ), whose variables do not outlive it
  std::vector<std::string> assigns;  // Simple: names its here-documents' expansions may assign
};
// The script's commands in order. Throws ConfigError ("SOURCE:LINE: ...") on an unclosed compound
// command or nesting over kMaxNesting.
List parse(std::vector<Token> tokens, const std::string& source);

}  // namespace stepsim::importers::shell
