#include "forward/interruptible_transports.h"

#include <utility>

namespace eddy::forward {

class RegisteredTransport final : public client::Transport {
 public:
  RegisteredTransport(std::unique_ptr<client::Transport> inner, std::shared_ptr<InterruptibleTransports> registry)
      : inner_(std::move(inner)), registry_(std::move(registry)) {
    registry_->add(inner_.get());
  }
  ~RegisteredTransport() override { registry_->remove(inner_.get()); }
  Status connect(const client::BrokerAddress& a, client::Deadline d) override { return inner_->connect(a, d); }
  Status write_all(std::span<const uint8_t> b, client::Deadline d) override { return inner_->write_all(b, d); }
  Status read_exact(std::span<uint8_t> b, client::Deadline d) override { return inner_->read_exact(b, d); }
  void close() override { inner_->close(); }
  bool is_open() const override { return inner_->is_open(); }
  Status check_idle() override { return inner_->check_idle(); }
  void interrupt() override { inner_->interrupt(); }

 private:
  std::unique_ptr<client::Transport> inner_;
  std::shared_ptr<InterruptibleTransports> registry_;
};

client::TransportFactory InterruptibleTransports::wrap(client::TransportFactory inner) {
  std::shared_ptr<InterruptibleTransports> self = shared_from_this();
  return [self, inner = std::move(inner)]() -> std::unique_ptr<client::Transport> {
    return std::make_unique<RegisteredTransport>(inner(), self);
  };
}

void InterruptibleTransports::interrupt_all() {
  port::MutexLock lock(mu_);
  interrupted_ = true;
  for (client::Transport* t : live_) t->interrupt();
}

void InterruptibleTransports::add(client::Transport* t) {
  port::MutexLock lock(mu_);
  live_.insert(t);
  if (interrupted_) t->interrupt();
}

void InterruptibleTransports::remove(client::Transport* t) {
  port::MutexLock lock(mu_);
  live_.erase(t);
}

}  // namespace eddy::forward
