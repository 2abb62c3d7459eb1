// Per-API request counters of the broker: requests received, requests that
// closed their connection (malformed, unsupported API or version), the
// non-zero error codes of every response (each error code field counts once:
// per partition, topic, group...), and the latency from
// frame received to response handed to the connection (a parked Fetch or
// acks=all Produce counts its wait, as Kafka's TotalTimeMs does).
//
// Threading: reactor thread only for the writers; the histograms may be
// read from any thread. Recording never allocates, except the first time a
// given (API, error code) pair is seen (a bounded set).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "metrics/histogram.h"

namespace eddy::broker {

class RequestMetrics {
 public:
  // One slot per API key in api_keys (what the broker supports), plus one
  // for every other key (or a frame too short to name one).
  explicit RequestMetrics(const std::vector<int16_t>& api_keys);

  // The slot counting api_key's requests.
  uint8_t slot_for(int16_t api_key) const {
    return api_key >= 0 && static_cast<size_t>(api_key) < slot_of_.size() ? slot_of_[api_key] : other_slot();
  }
  uint8_t other_slot() const { return static_cast<uint8_t>(slots_.size() - 1); }

  void note_request(uint8_t slot) { ++slots_[slot].requests; }
  void note_refused(uint8_t slot) { ++slots_[slot].refused; }
  void note_answered(uint8_t slot, int64_t nanos) { slots_[slot].latency.observe_nanos(nanos); }
  void note_error(int16_t api_key, int16_t error_code) { ++errors_[{api_key, error_code}]; }

  struct Slot {
    int16_t api_key = -1;  // -1: the slot of other keys
    uint64_t requests = 0;
    uint64_t refused = 0;
    metrics::LatencyHistogram latency;
  };
  // In api_keys order, the other slot last.
  const std::vector<Slot>& slots() const { return slots_; }
  // (api key, error code) -> error code fields answered with it.
  const std::map<std::pair<int16_t, int16_t>, uint64_t>& errors() const { return errors_; }

 private:
  std::array<uint8_t, 128> slot_of_{};
  std::vector<Slot> slots_;
  std::map<std::pair<int16_t, int16_t>, uint64_t> errors_;
};

}  // namespace eddy::broker
