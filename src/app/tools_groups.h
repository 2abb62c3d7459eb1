// eddy groups: kafka-consumer-groups.sh for Eddy.
#pragma once

#include <string>
#include <vector>

namespace eddy::app {

int run_groups(const std::vector<std::string>& args);

}  // namespace eddy::app
