// Produces the values the generated fill_test_values() functions put into
// messages: every value differs from the field's default, and successive
// values differ from each other, so a field that an encoder drops, swaps or
// misplaces changes the decoded message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace eddy::protocol::testing {

class Filler {
 public:
  // Seed 0: nullable fields get values, arrays two elements.
  // Seed 1: fields nullable in the version are null, arrays one element.
  explicit Filler(int seed) : seed_(seed), counter_(static_cast<uint32_t>(seed) * 1000u + 1u) {}

  bool make_null() const { return seed_ % 2 == 1; }
  size_t array_size() const { return seed_ % 2 == 1 ? 1 : 2; }

  template <typename T>
  T next_int(T default_value) {
    T v = static_cast<T>(counter_++ % 100u + 1u);
    if (v == default_value) v = static_cast<T>(v + 1);
    return v;
  }
  double next_float64(double default_value) {
    double v = 0.5 + counter_++;
    return v == default_value ? v + 1 : v;
  }
  std::string next_string() { return "s" + std::to_string(counter_++); }
  std::vector<uint8_t> next_bytes() {
    uint32_t c = counter_++;
    return {static_cast<uint8_t>(c), static_cast<uint8_t>(c >> 8), 0xab};
  }
  Uuid next_uuid() {
    Uuid u;
    uint32_t c = counter_++;
    for (size_t i = 0; i < u.bytes.size(); ++i) u.bytes[i] = static_cast<uint8_t>(c + i);
    return u;
  }
  // A view of static bytes (a records field never owns its bytes).
  Records next_records() {
    static const uint8_t kBytes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    Records r;
    r.bytes = std::span<const uint8_t>(kBytes, 1 + counter_++ % 15);
    return r;
  }

 private:
  int seed_;
  uint32_t counter_;
};

}  // namespace eddy::protocol::testing
