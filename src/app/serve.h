// `eddy serve [CONFIG] [--override key=value]...`: runs the broker until
// SIGINT/SIGTERM, then shuts down cleanly and returns 0.
#pragma once

#include <string>
#include <vector>

namespace eddy::app {

int run_serve(const std::vector<std::string>& args);

}  // namespace eddy::app
