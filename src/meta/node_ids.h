// A list of node ids as text, "1,2,3": how eddy.db keeps a partition's
// replicas and in-sync replicas, and how tools and log lines print them
// (as Kafka's kafka-topics --describe does).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "port/status.h"

namespace eddy::meta {

std::string join_node_ids(const std::vector<int32_t>& ids);
// The inverse of join_node_ids; kCorruption (naming what) for anything but
// non-negative decimal ids separated by single commas ("" is no ids).
Status split_node_ids(const std::string& text, const char* what, std::vector<int32_t>* out);

}  // namespace eddy::meta
