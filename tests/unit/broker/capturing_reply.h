// A broker test's Reply: the response frame once it is sent, with file
// regions (zero-copy fetch answers) read back into it; send_nothing is
// recorded too (acks=0, a closed connection). Shared by the broker tests
// that drive Broker::handle with frames (one test binary each; the helpers
// live in an unnamed namespace).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "broker/reply.h"
#include "protocol/output_buffer.h"

namespace eddy::broker {
namespace {

// A response frame once it is sent (file regions read back).
struct Answer {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<std::vector<uint8_t>> frame;
  bool nothing = false;  // send_nothing (acks=0, a closed connection)
  bool frame_released = false;  // the broker freed the request's frame before answering

  bool released() {
    std::lock_guard<std::mutex> lock(mu);
    return frame_released;
  }
  bool answered() {
    std::lock_guard<std::mutex> lock(mu);
    return frame.has_value() || nothing;
  }
};

class CapturingReply final : public Reply {
 public:
  explicit CapturingReply(std::shared_ptr<Answer> answer) : answer_(std::move(answer)) {}
  void send(protocol::OutputBuffer response) override {
    std::vector<uint8_t> bytes;
    for (const auto& chunk : response.chunks()) {
      if (!chunk.is_file) {
        auto m = response.memory_of(chunk);
        bytes.insert(bytes.end(), m.begin(), m.end());
        continue;
      }
      size_t at = bytes.size();
      bytes.resize(at + chunk.length);
      ssize_t got = pread(chunk.file.fd, bytes.data() + at, chunk.length, static_cast<off_t>(chunk.file.offset));
      EXPECT_EQ(got, static_cast<ssize_t>(chunk.length));
    }
    std::lock_guard<std::mutex> lock(answer_->mu);
    answer_->frame = std::move(bytes);
    answer_->cv.notify_all();
  }
  void send_nothing() override {
    std::lock_guard<std::mutex> lock(answer_->mu);
    answer_->nothing = true;
    answer_->cv.notify_all();
  }
  void close_connection() override { ADD_FAILURE() << "connection closed"; }
  void send_and_close(protocol::OutputBuffer response) override { send(std::move(response)); }
  void authenticated(const std::string&) override {}
  void frame_released() override {
    std::lock_guard<std::mutex> lock(answer_->mu);
    answer_->frame_released = true;
  }
  bool connection_closed() const override { return false; }

 private:
  std::shared_ptr<Answer> answer_;
};

}  // namespace
}  // namespace eddy::broker
