#include "forward/send_window.h"

#include <limits>

namespace eddy::forward {

int32_t increment_sequence(int32_t sequence, int64_t increment) {
  int64_t next = static_cast<int64_t>(sequence) + increment;
  const int64_t wrap = static_cast<int64_t>(std::numeric_limits<int32_t>::max()) + 1;
  return static_cast<int32_t>(next % wrap);
}

SendWindow::SendWindow(const meta::ForwardCursor& saved, const meta::ForwardProducer& producer, int32_t max_in_flight)
    : max_in_flight_(max_in_flight), acked_(saved) {
  if (acked_.producer_id < 0) {
    acked_.producer_id = producer.producer_id;
    acked_.producer_epoch = producer.producer_epoch;
    acked_.next_sequence = 0;
  }
  rewind();
}

size_t SendWindow::limit() const { return confirmed_ ? static_cast<size_t>(max_in_flight_) : 1; }

int32_t SendWindow::send(uint64_t tag, int64_t base_offset, int64_t next_offset, uint64_t bytes) {
  const int32_t base_sequence = send_sequence_;
  send_offset_ = next_offset;
  send_sequence_ = increment_sequence(send_sequence_, next_offset - base_offset);
  in_flight_.push_back({tag, base_offset, next_offset, base_sequence, send_sequence_, bytes});
  return base_sequence;
}

const SendWindow::Batch* SendWindow::oldest(uint64_t tag) const {
  if (in_flight_.empty() || in_flight_.front().tag != tag) return nullptr;
  return &in_flight_.front();
}

bool SendWindow::acknowledge(uint64_t tag, Batch* done, int64_t remote_base_offset) {
  if (oldest(tag) == nullptr) return false;
  *done = in_flight_.front();
  in_flight_.pop_front();
  confirmed_ = true;
  acked_.next_offset = done->next_offset;
  acked_.next_sequence = done->next_sequence;
  // Not said (-1): the old value stays, which is lower, so a later look for
  // unseen batches starts earlier than it needs to, never after them.
  if (remote_base_offset >= 0) acked_.remote_next_offset = remote_base_offset + (done->next_offset - done->base_offset);
  return true;
}

void SendWindow::rewind() {
  if (!in_flight_.empty()) unsettled_ = true;
  in_flight_.clear();
  confirmed_ = false;
  send_offset_ = acked_.next_offset;
  send_sequence_ = acked_.next_sequence;
}

void SendWindow::restart_sequences(const meta::ForwardProducer& producer) {
  acked_.producer_id = producer.producer_id;
  acked_.producer_epoch = producer.producer_epoch;
  acked_.next_sequence = 0;
  rewind();
}

void SendWindow::move_cursor(int64_t next_offset, int64_t dropped_messages) {
  acked_.next_offset = next_offset;
  acked_.dropped_messages += dropped_messages;
  send_offset_ = next_offset;
}

}  // namespace eddy::forward
