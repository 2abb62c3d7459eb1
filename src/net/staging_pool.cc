#include "net/staging_pool.h"

#include <utility>

namespace eddy::net {
namespace {

std::vector<std::vector<uint8_t>>& pool() {
  thread_local std::vector<std::vector<uint8_t>> buffers;
  return buffers;
}

}  // namespace

std::vector<uint8_t> take_staging_buffer(size_t bytes) {
  auto& buffers = pool();
  if (!buffers.empty() && buffers.back().size() == bytes) {
    std::vector<uint8_t> buffer = std::move(buffers.back());
    buffers.pop_back();
    return buffer;
  }
  return std::vector<uint8_t>(bytes);
}

void give_back_staging_buffer(std::vector<uint8_t>& buffer, size_t bytes) {
  auto& buffers = pool();
  if (buffers.size() < kPooledStagingBuffers && buffer.size() == bytes) buffers.push_back(std::move(buffer));
  buffer = std::vector<uint8_t>();
}

}  // namespace eddy::net
