#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace eddy::meta {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;

  friend bool operator==(const TopicPartition&, const TopicPartition&) = default;
  friend auto operator<=>(const TopicPartition&, const TopicPartition&) = default;
};

}  // namespace eddy::meta
