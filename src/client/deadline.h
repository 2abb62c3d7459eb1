// A point in time on the monotonic clock by which a network wait must end.
// Every blocking call of the client takes one, so no wait is unbounded.
#pragma once

#include <algorithm>
#include <cstdint>

#include "port/port.h"

namespace eddy::client {

class Deadline {
 public:
  // REQUIRES: ms >= 0.
  static Deadline after_ms(int64_t ms) { return Deadline(port::monotonic_millis() + ms); }
  static Deadline at_monotonic_ms(int64_t at) { return Deadline(at); }

  int64_t at_ms() const { return at_ms_; }
  // Milliseconds left, never negative.
  int64_t remaining_ms() const { return std::max<int64_t>(0, at_ms_ - port::monotonic_millis()); }
  bool expired() const { return port::monotonic_millis() >= at_ms_; }
  Deadline earlier(Deadline other) const { return Deadline(std::min(at_ms_, other.at_ms_)); }

 private:
  explicit Deadline(int64_t at) : at_ms_(at) {}
  int64_t at_ms_;
};

}  // namespace eddy::client
