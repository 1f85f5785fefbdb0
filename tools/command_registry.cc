#include <iostream>

#include "tools/command.h"
#include "driver/exit_codes.h"

namespace sharc::tools {

using driver::kExitUsage;

// Defined in command_<name>.cc. A new subcommand adds a line here.
extern const Command kVerifyCommand;
extern const Command kFmtCommand;
extern const Command kRunCommand;
extern const Command kPropagateCommand;
extern const Command kPartitionCommand;
extern const Command kReportCommand;
extern const Command kCompareCommand;
extern const Command kCompileCommand;
extern const Command kOptCommand;
extern const Command kGradCommand;
extern const Command kJvpCommand;
extern const Command kTransposeCommand;

const std::vector<const Command*>& AllCommands() {
  static const std::vector<const Command*> commands = {
      &kVerifyCommand,
      &kFmtCommand,
      &kRunCommand,
      &kPropagateCommand,
      &kPartitionCommand,
      &kReportCommand,
      &kCompareCommand,
      &kCompileCommand,
      &kOptCommand,
      &kGradCommand,
      &kJvpCommand,
      &kTransposeCommand,
  };
  return commands;
}

const Command* FindCommand(absl::string_view name) {
  for (const Command* command : AllCommands()) {
    if (command->name == name) return command;
  }
  return nullptr;
}

int UsageError(const Command& command, absl::string_view message, std::ostream& err) {
  err << "sharc " << command.name << ": error: " << message << "\n\n" << command.usage;
  return kExitUsage;
}

}  // namespace sharc::tools
