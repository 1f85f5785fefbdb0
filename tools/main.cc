// Entry point of the `sharc` command: dispatches to a subcommand
// (tools/command.h) and turns anything unexpected into an exit code instead
// of a crash.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "tools/command.h"
#include "tools/exit_codes.h"

namespace {

constexpr char kVersion[] = "sharc 0.1.0";

void PrintOverview(std::ostream& os) {
  os << "usage: sharc COMMAND [ARGS...]\n\n"
        "sharc: a sharding compiler for HLO programs.\n\ncommands:\n";
  for (const sharc::tools::Command* command : sharc::tools::AllCommands()) {
    std::string name(command->name);
    name.resize(std::max<size_t>(name.size(), 10), ' ');
    os << "  " << name << command->summary << "\n";
  }
  os << "\nRun `sharc COMMAND --help` for a command's flags.\n"
        "Exit codes: 0 ok, 1 invalid input or compile error, 2 usage error,\n"
        "3 runtime failure, 70 internal error.\n";
}

int Main(int argc, char** argv) {
  using namespace sharc::tools;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintOverview(std::cerr);
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    PrintOverview(std::cout);
    return kExitOk;
  }
  if (first == "--version") {
    std::cout << kVersion << "\n";
    return kExitOk;
  }
  if (first == "help") {
    if (args.size() == 1) {
      PrintOverview(std::cout);
      return kExitOk;
    }
    if (const Command* command = FindCommand(args[1])) {
      std::cout << command->usage;
      return kExitOk;
    }
    std::cerr << "sharc: error: unknown command '" << args[1] << "'\n\n";
    PrintOverview(std::cerr);
    return kExitUsage;
  }
  const Command* command = FindCommand(first);
  if (command == nullptr) {
    std::cerr << "sharc: error: unknown command '" << first << "'\n\n";
    PrintOverview(std::cerr);
    return kExitUsage;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  return command->run(rest, std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  try {
    int code = Main(argc, argv);
    std::cout.flush();
    return code;
  } catch (const std::bad_alloc&) {
    std::cerr << "sharc: error: out of memory\n";
    return sharc::tools::kExitRuntimeFailure;
  } catch (const std::exception& e) {
    std::cerr << "sharc: internal error: " << e.what() << "\n";
    return sharc::tools::kExitInternal;
  }
}
