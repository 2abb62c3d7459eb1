// Kafka's topic name rules (org.apache.kafka.common.internals.Topic), for
// every room that accepts a topic name (CreateTopics, auto-creation, tools).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace eddy::meta {

inline constexpr size_t kMaxTopicNameLength = 249;

// Empty when name is a legal topic name: 1..249 characters from
// [a-zA-Z0-9._-], and not "." or "..". Otherwise Kafka's message, e.g.
// "Topic name is invalid: '.' is not allowed" (suitable for the error_message
// of an INVALID_TOPIC_EXCEPTION).
std::string topic_name_error(std::string_view name);
inline bool is_valid_topic_name(std::string_view name) { return topic_name_error(name).empty(); }

// Kafka forbids two topics whose names differ only by '.' versus '_' (they
// collide in metric names). True when a and b are such a pair or equal.
bool topic_names_collide(std::string_view a, std::string_view b);

}  // namespace eddy::meta
