#include "app/producer_id_blocks.h"

namespace eddy::app {

void ProducerIdBlocks::add(int64_t start, int32_t len) { blocks_.push_back(Block{start, start + len, len}); }

bool ProducerIdBlocks::next(int64_t* id) {
  if (blocks_.empty()) return false;
  Block& current = blocks_.front();
  *id = current.next++;
  if (current.next == current.end) blocks_.pop_front();
  return true;
}

bool ProducerIdBlocks::wants_block() const {
  if (blocks_.empty()) return true;
  if (blocks_.size() > 1) return false;
  const Block& current = blocks_.front();
  return (current.end - current.next) * 10 < current.len;
}

int64_t ProducerIdBlocks::remaining() const {
  int64_t n = 0;
  for (const Block& b : blocks_) n += b.end - b.next;
  return n;
}

}  // namespace eddy::app
