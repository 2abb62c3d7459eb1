#include "forward/forwarder.h"

namespace eddy::forward {

Forwarder::Forwarder(broker::Executor& executor, broker::Broker& broker, meta::MetaStore* meta,
                     std::vector<LinkOptions> links)
    : broker_(broker), options_(std::move(links)), store_(executor, broker.topics(), meta) {}

Forwarder::~Forwarder() {
  request_stop();
  join();
}

bool Forwarder::init(std::string* error) {
  std::vector<std::pair<std::string, const TopicMapping*>> named;
  for (const LinkOptions& o : options_) {
    auto mapping = std::make_unique<TopicMapping>();
    if (!TopicMapping::create(o, mapping.get(), error)) {
      *error = "forward link " + o.name + ": " + *error;
      return false;
    }
    named.emplace_back(o.name, mapping.get());
    mappings_.push_back(std::move(mapping));
  }
  if (!store_.load(named, error)) return false;
  broker_.set_partition_observer(
      [this](const std::string& topic, int32_t partition, storage::PartitionLog* log, bool after_start) {
        store_.on_partition_opened(topic, partition, log, after_start);
      });
  return true;
}

void Forwarder::start() {
  for (size_t i = 0; i < options_.size(); ++i) {
    links_.push_back(std::make_unique<Link>(options_[i], *mappings_[i], &store_, &board_));
    links_.back()->start();
  }
}

void Forwarder::request_stop() {
  store_.stop();
  for (auto& link : links_) link->request_stop();
}

void Forwarder::join() {
  for (auto& link : links_) link->join();
}

}  // namespace eddy::forward
