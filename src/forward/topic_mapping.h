// Which local topics a link forwards, under which remote name and with which
// priority. Patterns are compiled once; matching is a whole-name regex match.
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "forward/link_options.h"
#include "port/status.h"

namespace eddy::forward {

class TopicMapping {
 public:
  // kInvalidArgument naming the bad pattern or template.
  static Status create(const LinkOptions& options, TopicMapping* out);

  bool forwards(const std::string& local_topic) const;
  // The remote name; empty with *error when the result is not a valid
  // Kafka topic name.
  std::string remote_name(const std::string& local_topic, std::string* error) const;
  int32_t priority(const std::string& local_topic) const;

 private:
  std::vector<std::regex> topics_;
  std::vector<std::pair<std::regex, int32_t>> priorities_;
  std::string template_;
  std::string gateway_id_;
  std::string link_;
};

// Kafka's rule: 1..249 characters of [a-zA-Z0-9._-], not "." or "..".
bool valid_topic_name(const std::string& name, std::string* why);

}  // namespace eddy::forward
