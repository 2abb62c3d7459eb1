// Store-and-forward: every link declared in the properties file, their
// shared LocalStore (reactor side: cursors and pins) and StatusBoard.
//
//   Forwarder forwarder(reactor, broker, meta, links);
//   forwarder.init(&error);      // reactor thread, before broker.start()
//   broker.start(&error);
//   forwarder.start();           // one thread per link
//   ... reactor runs ...
//   forwarder.request_stop();    // any thread, does not block
//   forwarder.join();            // after the reactor stopped
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "forward/link.h"
#include "forward/link_options.h"
#include "forward/link_status.h"
#include "forward/local_store.h"
#include "forward/topic_mapping.h"

namespace eddy::forward {

class Forwarder {
 public:
  Forwarder(broker::Executor& executor, broker::Broker& broker, meta::MetaStore* meta,
            std::vector<LinkOptions> links);
  ~Forwarder();

  // Compiles the topic mappings, loads saved progress and registers with
  // the broker so that forwarded partitions are pinned as they open. False
  // with *error (a bad pattern, a meta store failure).
  bool init(std::string* error);
  void start();
  void request_stop();
  void join();

  const StatusBoard& status() const { return board_; }
  // The control socket's `forward status [json]` answer body.
  std::string status_text(bool json) const { return json ? board_.render_json() : board_.render_text(); }

 private:
  broker::Broker& broker_;
  std::vector<LinkOptions> options_;
  std::vector<std::unique_ptr<TopicMapping>> mappings_;
  LocalStore store_;
  StatusBoard board_;
  std::vector<std::unique_ptr<Link>> links_;
};

}  // namespace eddy::forward
