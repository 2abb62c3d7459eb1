// Staging buffers of connections that wait idle, kept for reuse so that a
// busy connection does not allocate one per request and an idle one holds
// none. One pool per thread (connections live on the reactor thread); at
// most kPooledStagingBuffers are kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace eddy::net {

inline constexpr size_t kPooledStagingBuffers = 16;

// A buffer of exactly `bytes` bytes (contents unspecified).
std::vector<uint8_t> take_staging_buffer(size_t bytes);
// Gives buffer back (kept when the pool has room and it is `bytes` long).
// Leaves buffer empty.
void give_back_staging_buffer(std::vector<uint8_t>& buffer, size_t bytes);

}  // namespace eddy::net
