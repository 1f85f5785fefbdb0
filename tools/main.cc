// Entry point of the `sharc` command: dispatches to a subcommand
// (tools/command.h) and turns anything unexpected into an exit code instead
// of a crash. Under `mpirun -np R` (R > 1) it also brackets the command with
// MPI: only process 0 prints, and a process that fails ends the whole job
// (MPI_Abort) so that no peer waits for it.
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/command.h"
#include "driver/exit_codes.h"
#include "driver/spmd_runner.h"

#ifdef SHARC_HAVE_MPI
#include "runtime/mpi_session.h"
#endif

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

int Main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  using namespace sharc::tools;
  using namespace sharc::driver;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintOverview(err);
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    PrintOverview(out);
    return kExitOk;
  }
  if (first == "--version") {
    out << kVersion << "\n";
    return kExitOk;
  }
  if (first == "help") {
    if (args.size() == 1) {
      PrintOverview(out);
      return kExitOk;
    }
    if (const Command* command = FindCommand(args[1])) {
      out << command->usage;
      return kExitOk;
    }
    err << "sharc: error: unknown command '" << args[1] << "'\n\n";
    PrintOverview(err);
    return kExitUsage;
  }
  const Command* command = FindCommand(first);
  if (command == nullptr) {
    err << "sharc: error: unknown command '" << first << "'\n\n";
    PrintOverview(err);
    return kExitUsage;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  return command->run(rest, out, err);
}

int GuardedMain(int argc, char** argv, std::ostream& out, std::ostream& err) {
  try {
    int code = Main(argc, argv, out, err);
    out.flush();
    return code;
  } catch (const std::bad_alloc&) {
    err << "sharc: error: out of memory\n";
    return sharc::driver::kExitRuntimeFailure;
  } catch (const std::exception& e) {
    err << "sharc: internal error: " << e.what() << "\n";
    return sharc::driver::kExitInternal;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  if (!sharc::driver::LaunchedByMpirun()) return GuardedMain(argc, argv, std::cout, std::cerr);
#ifdef SHARC_HAVE_MPI
  if (absl::Status st = sharc::runtime::InitMpi(); !st.ok()) {
    std::cerr << "sharc: error: " << st.message() << "\n";
    return sharc::driver::kExitRuntimeFailure;
  }
#endif
  // Process 0 speaks for the job; the others keep their output and show it
  // only if they fail.
  const bool main_process = sharc::driver::IsMainProcess();
  std::ostringstream quiet_out, quiet_err;
  int code = main_process ? GuardedMain(argc, argv, std::cout, std::cerr)
                          : GuardedMain(argc, argv, quiet_out, quiet_err);
#ifdef SHARC_HAVE_MPI
  if (code != sharc::driver::kExitOk) {
    if (!main_process) {
      std::istringstream lines(quiet_err.str());
      for (std::string line; std::getline(lines, line);) {
        std::cerr << "[process " << sharc::runtime::MpiRank() << "] " << line << "\n";
      }
    }
    std::cerr.flush();
    sharc::runtime::AbortMpiJob(code);
  }
  sharc::runtime::FinalizeMpi();
#endif
  return code;
}
