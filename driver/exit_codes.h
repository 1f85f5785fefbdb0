// The `sharc` command's exit codes. They are part of the CLI's contract
// (docs/cli.md) so scripts and CI can tell bad input from a broken run.
#pragma once

namespace sharc::driver {

enum ExitCode : int {
  kExitOk = 0,
  // The input is invalid: a parse or verifier error, a bad .npy file,
  // inputs that do not match the program, or a compile error.
  kExitInputError = 1,
  // The command line is wrong: unknown command or flag, missing argument.
  kExitUsage = 2,
  // The program was valid but running it failed (evaluation error,
  // collective failure).
  kExitRuntimeFailure = 3,
  // A bug in sharc itself (an exception escaped, a broken invariant).
  kExitInternal = 70,
};

}  // namespace sharc::driver
