#include "local_side.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>

#include "port/port.h"
#include "protocol/record_batch.h"

namespace eddy::forward::testing {

TestReactor::TestReactor() : thread_([this] { loop(); }) {}

TestReactor::~TestReactor() { stop(); }

void TestReactor::post(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(fn));
  cv_.notify_all();
}

port::Executor::TimerId TestReactor::schedule_after(int64_t delay_ms, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  TimerId id = next_timer_++;
  timers_[id] = {port::monotonic_millis() + delay_ms, std::move(fn)};
  cv_.notify_all();
  return id;
}

void TestReactor::cancel(TimerId id) {
  std::lock_guard<std::mutex> lock(mu_);
  timers_.erase(id);
}

void TestReactor::run(const std::function<void()>& fn) {
  std::mutex done_mu;
  std::condition_variable done_cv;
  bool done = false;
  post([&] {
    fn();
    std::lock_guard<std::mutex> lock(done_mu);
    done = true;
    done_cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(done_mu);
  done_cv.wait(lock, [&] { return done; });
}

void TestReactor::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void TestReactor::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    std::function<void()> fn;
    if (!queue_.empty()) {
      fn = std::move(queue_.front());
      queue_.pop_front();
    } else {
      auto next = timers_.end();
      for (auto it = timers_.begin(); it != timers_.end(); ++it) {
        if (next == timers_.end() || it->second.first < next->second.first) next = it;
      }
      const int64_t now = port::monotonic_millis();
      if (next != timers_.end() && next->second.first <= now) {
        fn = std::move(next->second.second);
        timers_.erase(next);
      } else if (next != timers_.end()) {
        cv_.wait_for(lock, std::chrono::milliseconds(next->second.first - now));
        continue;
      } else {
        cv_.wait(lock);
        continue;
      }
    }
    lock.unlock();
    fn();
    lock.lock();
  }
}

LocalSide::LocalSide() {
  EXPECT_EQ(storage::LogManager::open(dir_.path(), &logs_).code(), Status::Code::kOk);
  Status s = meta::MetaStore::open(dir_.path() + "/eddy.db", &meta_);
  EXPECT_TRUE(s.ok()) << s.message();
  broker::BrokerOptions options;
  options.log_defaults.segment_bytes = 64 * 1024;
  options.log_defaults.acks_all_waits_for = storage::AcksAllWaitsFor::kPageCache;
  broker_ = std::make_unique<broker::Broker>(reactor_, options, meta_.get(), logs_.get());
}

LocalSide::~LocalSide() {
  reactor_.run([this] {
    broker_.reset();
    if (logs_) {
      EXPECT_TRUE(logs_->close().ok());
    }
  });
  reactor_.stop();
  if (meta_) {
    EXPECT_TRUE(meta_->close().ok());
  }
}

void LocalSide::start() {
  reactor_.run([this] {
    Status s = broker_->start();
    EXPECT_TRUE(s.ok()) << s.to_string();
  });
}

void LocalSide::create_topic(const std::string& name, int32_t partitions) {
  reactor_.run([&] {
    broker::TopicResult r = broker_->topics().create(name, partitions, 1, {}, false, nullptr);
    EXPECT_TRUE(r.ok()) << r.message;
  });
}

void LocalSide::delete_topic(const std::string& name) {
  reactor_.run([&] {
    broker::TopicResult r = broker_->topics().remove(name);
    EXPECT_TRUE(r.ok()) << r.message;
  });
}

int64_t LocalSide::append(const std::string& topic, int32_t partition, int records) {
  int64_t base = -1;
  reactor_.run([&] {
    broker::Topic* t = broker_->topics().find(topic);
    if (t == nullptr || static_cast<size_t>(partition) >= t->partitions.size()) return;
    storage::PartitionLog* log = t->partitions[static_cast<size_t>(partition)];
    protocol::RecordBatchBuilder builder;
    const int64_t first = log->log_end_offset();
    for (int i = 0; i < records; ++i) {
      builder.add("k", topic + "-" + std::to_string(partition) + ":" + std::to_string(first + i), 1000 + i);
    }
    std::vector<uint8_t> batch = builder.build();
    storage::AppendResult result;
    if (log->append(batch, storage::AppendOptions{}, &result).ok()) base = result.base_offset;
  });
  return base;
}

int64_t LocalSide::pin(const std::string& topic, int32_t partition) {
  int64_t pin = -2;
  reactor_.run([&] {
    broker::Topic* t = broker_->topics().find(topic);
    if (t != nullptr && static_cast<size_t>(partition) < t->partitions.size()) {
      pin = t->partitions[static_cast<size_t>(partition)]->pin();
    }
  });
  return pin;
}

bool eventually(const std::function<bool()>& condition, int64_t timeout_ms) {
  const int64_t until = port::monotonic_millis() + timeout_ms;
  while (port::monotonic_millis() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

}  // namespace eddy::forward::testing
