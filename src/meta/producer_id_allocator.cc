#include "meta/producer_id_allocator.h"

#include <limits>

namespace eddy::meta {

Status ProducerIdAllocator::reserve_block() {
  Transaction tx(db_);
  Status s = tx.begin();
  if (!s.ok()) return s;
  int64_t start = 0;
  s = db_->query_int64("SELECT next_producer_id_block FROM cluster WHERE singleton = 0", &start);
  if (s.is_not_found()) return Status::corruption(db_->path() + ": the cluster row is missing");
  if (!s.ok()) return s;
  // Blocks start at multiples of the block size (which may differ from an
  // earlier run's).
  const int64_t block = (start + block_size_ - 1) / block_size_;
  if (start < 0 || block > std::numeric_limits<int64_t>::max() / block_size_ - 1) {
    return Status::io_error(db_->path() + ": producer ids exhausted (next block starts at " + std::to_string(start) +
                            ")");
  }
  Statement st;
  s = db_->prepare("UPDATE cluster SET next_producer_id_block = ? WHERE singleton = 0", &st);
  if (!s.ok()) return s;
  start = block * block_size_;
  st.bind_int64(1, start + block_size_);
  s = st.run();
  if (!s.ok()) return s;
  // synchronous=FULL: the reservation is on stable storage when commit returns.
  s = tx.commit();
  if (!s.ok()) return s;
  next_ = start;
  end_ = start + block_size_;
  return Status();
}

Status ProducerIdAllocator::next(int64_t* id) {
  if (next_ == end_) {
    Status s = reserve_block();
    if (!s.ok()) return s;
  }
  *id = next_++;
  return Status();
}

}  // namespace eddy::meta
