// The `eddy` command line: subcommand dispatch and usage text.
#pragma once

namespace eddy::app {

// Exit codes of the eddy command.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // a runtime failure (I/O, a refused request)
constexpr int kExitUsage = 2;    // bad arguments or configuration

int run_cli(int argc, char** argv);

}  // namespace eddy::app
