#include "forward/forwarder.h"

#include "port/log.h"

namespace eddy::forward {

Forwarder::Forwarder(port::Executor& executor, broker::Broker& broker, std::string data_dir,
                     std::vector<LinkOptions> links)
    : executor_(executor), broker_(broker), data_dir_(std::move(data_dir)), options_(std::move(links)) {}

Forwarder::~Forwarder() {
  request_stop();
  join();
}

Status Forwarder::init() {
  std::vector<std::pair<std::string, const TopicMapping*>> named;
  for (const LinkOptions& o : options_) {
    auto mapping = std::make_unique<TopicMapping>();
    Status s = TopicMapping::create(o, mapping.get());
    if (!s.ok()) return s.with_context("forward link " + o.name);
    named.emplace_back(o.name, mapping.get());
    mappings_.push_back(std::move(mapping));
  }
  if (options_.empty()) return Status();  // nothing to pin, no file to create
  const std::string path = data_dir_ + "/forward.db";
  Status s = meta::ForwardProgress::open(path, &progress_);
  if (!s.ok()) return s;
  // Progress of links no longer configured stays (a link renamed back
  // resumes); say so once.
  std::vector<std::string> saved;
  if (progress_->list_links(&saved).ok()) {
    for (const std::string& name : saved) {
      bool configured = false;
      for (const LinkOptions& o : options_) configured |= o.name == name;
      if (!configured) {
        EDDY_LOG_WARN("forward: {} keeps progress of link '{}', which is not in eddy.forward.links (ignored)",
                      path, name);
      }
    }
  }
  store_ = std::make_unique<LocalStore>(executor_, broker_.topics(), progress_.get());
  s = store_->load(named);
  if (!s.ok()) return s;
  broker_.add_partition_observer(
      [this](const std::string& topic, int32_t partition, storage::PartitionLog* log, bool after_start) {
        store_->on_partition_opened(topic, partition, log, after_start);
      });
  return Status();
}

void Forwarder::start() {
  for (size_t i = 0; i < options_.size(); ++i) {
    links_.push_back(std::make_unique<Link>(options_[i], *mappings_[i], store_.get(), progress_.get(), &board_));
    links_.back()->start();
  }
}

void Forwarder::request_stop() {
  if (store_) store_->stop();
  for (auto& link : links_) link->request_stop();
}

void Forwarder::join() {
  for (auto& link : links_) link->join();
}

}  // namespace eddy::forward
