#include <cstring>

#include <gtest/gtest.h>

#include "captures.h"

namespace eddy::protocol::testing {

std::span<const uint8_t> capture(const char* name) {
  for (size_t i = 0; i < kCaptureCount; ++i) {
    if (std::strcmp(kCaptures[i].name, name) == 0) return {kCaptures[i].data, kCaptures[i].size};
  }
  ADD_FAILURE() << "no captured frame named " << name;
  return {};
}

}  // namespace eddy::protocol::testing
