// The last hour of every link's backlog, for the status page: a fixed ring
// of kLinkHistorySamples samples per link, one taken every sample interval
// (eddy.metrics.history.sample.ms, 15 s by default: 240 samples = 60 min).
// Memory is fixed when the links are known (24 bytes a sample, ~5.6 KiB a
// link); the rings never allocate after construction (the status snapshot
// sample() is given is the forwarder's copy).
//
// Threading: reactor thread only (sample() runs from a reactor timer).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "forward/link_status.h"

namespace eddy::app {

inline constexpr size_t kLinkHistorySamples = 240;

struct LinkSample {
  int64_t wall_ms = 0;
  int64_t backlog_messages = 0;
  uint64_t backlog_bytes = 0;
};

class LinkHistory {
 public:
  // One ring per link name, in the given order.
  explicit LinkHistory(const std::vector<std::string>& link_names);

  // Records each link's backlog (sum over its partitions) at wall_ms. A
  // link not in the constructor's list is ignored.
  void sample(const std::vector<forward::LinkStatus>& links, int64_t wall_ms);

  // The samples of link, oldest first (empty for an unknown link).
  std::vector<LinkSample> samples(const std::string& link) const;

 private:
  struct Ring {
    std::string name;
    std::array<LinkSample, kLinkHistorySamples> samples{};
    size_t next = 0;   // where the next sample goes
    size_t count = 0;  // samples held, at most kLinkHistorySamples
  };
  std::vector<Ring> rings_;
};

}  // namespace eddy::app
