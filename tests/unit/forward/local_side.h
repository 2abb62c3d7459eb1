// The edge side of a forwarding test, in a temporary directory: a reactor
// thread (TestReactor), a broker over a real meta store and real logs, and
// helpers that create topics and append batches on the reactor, as local
// producers would. Links and the Forwarder run against it for real; only the
// central cluster is faked (fake_central.h).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "broker/broker.h"
#include "meta/meta_store.h"
#include "port/executor.h"
#include "port/port.h"
#include "storage/log_manager.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::forward::testing {

// An Executor with its own thread: posted closures in order, timers by due
// time. Stands in for net::Reactor.
class TestReactor final : public port::Executor {
 public:
  TestReactor();
  ~TestReactor() override;

  void post(std::function<void()> fn) override;
  TimerId schedule_after(int64_t delay_ms, std::function<void()> fn) override;
  void cancel(TimerId id) override;
  int64_t now_ms() override { return port::wall_clock_millis(); }
  bool on_loop_thread() const override { return std::this_thread::get_id() == thread_id_; }

  // Runs fn on the reactor thread and waits for it.
  void run(const std::function<void()>& fn);
  // Ends the thread; closures and timers not run yet are dropped.
  void stop();

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::map<TimerId, std::pair<int64_t, std::function<void()>>> timers_;  // id -> due (monotonic ms), fn
  TimerId next_timer_ = 1;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest exists
  const std::thread::id thread_id_ = thread_.get_id();
};

class LocalSide {
 public:
  LocalSide();
  ~LocalSide();

  // Starts the broker (opens the topics it has); set the partition observer
  // first.
  void start();
  // A topic with small page-cache segments (what is appended is forwardable
  // at once).
  void create_topic(const std::string& name, int32_t partitions);
  void delete_topic(const std::string& name);
  // Appends one batch of `records` records (values "<topic>-<partition>:<offset>")
  // and returns its base offset.
  int64_t append(const std::string& topic, int32_t partition, int records);
  // The partition's forwarding pin (-1: none), read on the reactor.
  int64_t pin(const std::string& topic, int32_t partition);

  const std::string& data_dir() const { return dir_.path(); }
  TestReactor& reactor() { return reactor_; }
  broker::Broker& broker() { return *broker_; }

 private:
  eddy::testing::TempDir dir_;
  std::unique_ptr<meta::MetaStore> meta_;
  std::unique_ptr<storage::LogManager> logs_;
  std::unique_ptr<broker::Broker> broker_;
  TestReactor reactor_;
};

// Polls condition every 5 ms until it holds or timeout_ms passed; its last
// value.
bool eventually(const std::function<bool()>& condition, int64_t timeout_ms = 10000);

}  // namespace eddy::forward::testing
