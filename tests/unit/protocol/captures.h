// Request frames captured from real clients (see data/capture.py), embedded
// by CMake. Each is a frame without its 4-byte size prefix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace eddy::protocol::testing {

struct Capture {
  const char* name;  // file name in tests/unit/protocol/data
  const uint8_t* data;
  size_t size;
};

extern const Capture kCaptures[];
extern const size_t kCaptureCount;

// The capture with this file name; an empty span (and a test failure) when
// there is none.
std::span<const uint8_t> capture(const char* name);

}  // namespace eddy::protocol::testing
