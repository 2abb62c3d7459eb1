// Store-and-forward: every link declared in the properties file, their
// shared LocalStore (reactor side: cursors and pins) and StatusBoard.
//
//   Forwarder forwarder(reactor, broker, data_dir, links);
//   Status s = forwarder.init(); // reactor thread, before broker.start()
//   Status s = broker.start();
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
#include "meta/forward_progress.h"

namespace eddy::forward {

class Forwarder {
 public:
  // Progress is kept in <data_dir>/forward.db (opened by init() when there
  // are links, or when the file exists from earlier links).
  Forwarder(port::Executor& executor, broker::Broker& broker, std::string data_dir, std::vector<LinkOptions> links);
  ~Forwarder();

  // Compiles the topic mappings, opens forward.db, loads saved progress and
  // registers with the broker so that forwarded partitions are pinned as
  // they open. Fails on a bad pattern (kInvalidArgument, naming the link) or
  // when forward.db cannot be opened.
  Status init();
  // A cluster node (reactor, after init(), before start()): which partitions
  // this node forwards and where their saved cursors go (local_store.h).
  // Without links: nothing to do.
  void set_cluster(ClusterForwarding cluster) {
    if (store_) store_->set_cluster(std::move(cluster));
  }
  // (reactor) A cursor the controller log carries (LocalStore::apply_shared_cursor).
  void apply_shared_cursor(const meta::ClusterForwardCursor& cursor) {
    if (store_) store_->apply_shared_cursor(cursor);
  }
  bool forwards_anything() const { return store_ != nullptr; }

  void start();
  void request_stop();
  void join();

  const StatusBoard& status() const { return board_; }
  // The control socket's `forward status [json]` answer body, with the disk
  // budget when given.
  std::string status_text(bool json, const DiskBudgetStatus* disk = nullptr) const {
    return json ? board_.render_json(disk) : board_.render_text(disk);
  }

 private:
  port::Executor& executor_;
  broker::Broker& broker_;
  const std::string data_dir_;
  std::vector<LinkOptions> options_;
  std::vector<std::unique_ptr<TopicMapping>> mappings_;
  std::unique_ptr<meta::ForwardProgress> progress_;
  std::unique_ptr<LocalStore> store_;
  StatusBoard board_;
  std::vector<std::unique_ptr<Link>> links_;
};

}  // namespace eddy::forward
