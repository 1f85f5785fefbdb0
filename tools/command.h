// The `sharc` subcommand registry. Each subcommand lives in its own
// command_<name>.cc and defines one `Command`; command_registry.cc lists them
// (an explicit list, because static-initialiser registration is silently
// dropped when the tools library is linked statically).
#pragma once

#include <ostream>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

namespace sharc::tools {

struct Command {
  absl::string_view name;
  // One line for `sharc --help`.
  absl::string_view summary;
  // Full text for `sharc NAME --help`: synopsis, description and flags.
  absl::string_view usage;
  // Runs the command on the arguments after its name and returns an exit
  // code (driver/exit_codes.h). Output goes to `out`, diagnostics to `err`.
  int (*run)(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
};

// Every subcommand, in the order `sharc --help` lists them.
const std::vector<const Command*>& AllCommands();
// nullptr when there is no such command.
const Command* FindCommand(absl::string_view name);

// Prints "sharc CMD: error: MESSAGE" and the command's usage to `err`;
// returns kExitUsage. Used for every command-line mistake.
int UsageError(const Command& command, absl::string_view message, std::ostream& err);

}  // namespace sharc::tools
