// Every transport a link's client creates, so that another thread can
// interrupt them: Link::request_stop() must end the link thread promptly
// even while it is blocked in a connect, a write or a read.
//
// Thread-safe. Once interrupt_all() was called, transports created later
// are interrupted as they are created.
#pragma once

#include <memory>
#include <set>

#include "client/transport.h"
#include "port/mutex.h"
#include "port/thread_annotations.h"

namespace eddy::forward {

class InterruptibleTransports : public std::enable_shared_from_this<InterruptibleTransports> {
 public:
  // A factory making what inner makes, registered here while they live.
  // The transports keep this registry alive.
  client::TransportFactory wrap(client::TransportFactory inner);
  void interrupt_all() EXCLUDES(mu_);

 private:
  friend class RegisteredTransport;
  void add(client::Transport* t) EXCLUDES(mu_);
  void remove(client::Transport* t) EXCLUDES(mu_);

  port::Mutex mu_;
  std::set<client::Transport*> live_ GUARDED_BY(mu_);
  bool interrupted_ GUARDED_BY(mu_) = false;
};

}  // namespace eddy::forward
