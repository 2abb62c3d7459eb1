// The controller leader's side of the admin APIs on a cluster node: changes
// validated here become controller records, and the request is answered once
// each record is committed and applied on this node (or failed).
#include <cstring>
#include <memory>

#include "broker/broker.h"
#include "broker/replica_placement.h"
#include "meta/uuid.h"
#include "port/log.h"
#include "protocol/headers.h"

namespace eddy::broker {

using protocol::ErrorCode;

void Broker::propose_all(Proposals proposals, std::function<void(size_t entry, const Status&)> on_outcome,
                         std::function<void()> done) {
  if (proposals.records.empty()) {
    done();
    return;
  }
  struct Waiting {
    size_t left;
    std::function<void(size_t, const Status&)> on_outcome;
    std::function<void()> done;
  };
  auto waiting = std::make_shared<Waiting>(Waiting{proposals.records.size(), std::move(on_outcome), std::move(done)});
  for (size_t i = 0; i < proposals.records.size(); ++i) {
    const size_t entry = proposals.entries[i];
    controller_->propose(proposals.records[i], [waiting, entry](const Status& s) {
      waiting->on_outcome(entry, s);
      if (--waiting->left == 0) waiting->done();
    });
  }
}

protocol::TopicRecord Broker::topic_record(const std::string& name, const NewTopicPlan& plan) const {
  protocol::TopicRecord record;
  record.name = name;
  const meta::Uuid id = meta::Uuid::random();
  std::memcpy(record.topic_id.bytes.data(), id.bytes.data(), 16);
  const int32_t count = plan.partitions == -1 ? options_.num_partitions : plan.partitions;
  const int32_t replication_factor =
      plan.replication == -1 ? options_.default_replication_factor : plan.replication;
  std::vector<std::vector<int32_t>> replicas =
      plan.replicas.empty() ? assign_replicas(name, 0, count, replication_factor) : plan.replicas;
  for (auto& ids : replicas) record.partitions.push_back({std::move(ids), {}});
  for (const auto& [key, value] : plan.configs) record.configs.push_back({key, value, {}});
  return record;
}

void Broker::auto_create_in_cluster(const Request& request, const std::string& name) {
  if (!auto_creating_.insert(name).second) return;  // on its way already
  if (controller_->is_leader()) {
    NewTopicPlan plan;  // the defaults: num.partitions, default.replication.factor
    TopicResult r = check_replication_factor(options_.default_replication_factor, cluster_node_ids().size());
    if (r.ok()) r = topics_.create(name, -1, -1, {}, true, nullptr);
    if (!r.ok()) {
      EDDY_LOG_DEBUG("auto-creation of topic {} refused: {}", name, r.message);
      auto_creating_.erase(name);
      return;
    }
    controller_->propose(topic_record(name, plan), [this, name](const Status&) { auto_creating_.erase(name); });
    return;
  }
  // A follower asks the leader as a client would (the leader checks again).
  protocol::CreateTopicsRequest create;
  protocol::CreateTopicsRequest::CreatableTopic topic;
  topic.name = name;
  topic.num_partitions = -1;
  topic.replication_factor = -1;
  create.topics.push_back(std::move(topic));
  create.timeout_ms = 30000;
  protocol::OutputBuffer frame;
  constexpr int16_t kVersion = 5;  // the leader answers 0-7
  if (Status s = protocol::encode_request_frame(create, kVersion, 0, std::string("eddy-auto-create"), &frame);
      !s.ok()) {
    auto_creating_.erase(name);
    return;
  }
  Request forwarded;
  forwarded.client = request.client;
  forwarded.frame.assign(frame.memory() + 4, frame.memory() + frame.memory_size());  // without the size prefix
  controller_->forward(forwarded,
                       [this, name](const Status&, protocol::OutputBuffer) { auto_creating_.erase(name); });
}

void Broker::create_topics_in_cluster(RequestPtr request, protocol::CreateTopicsRequest body) {
  struct State {
    RequestPtr request;
    protocol::CreateTopicsResponse response;
    std::vector<NewTopicPlan> plans;  // parallel to response.topics
  };
  auto state = std::make_shared<State>();
  state->request = std::move(request);
  Proposals proposals;
  for (const auto& t : body.topics) {
    protocol::CreateTopicsResponse::CreatableTopicResult out;
    out.name = t.name;
    out.error_message.reset();
    out.configs.reset();
    NewTopicPlan plan;
    TopicResult r = check_new_topic(*state->request, t, &plan);
    // The checks of a creation (name, collisions, counts, configs, budget)
    // without creating: the record does, on every node.
    if (r.ok()) r = topics_.create(t.name, plan.partitions, plan.replication, plan.configs, true, nullptr);
    out.error_code = protocol::to_int(r.code);
    if (!r.ok()) {
      out.error_message = r.message;
    } else if (body.validate_only) {
      describe_created(plan, nullptr, &out);
    } else {
      protocol::TopicRecord record = topic_record(t.name, plan);
      plan.id = record.topic_id;
      proposals.records.push_back(std::move(record));
      proposals.entries.push_back(state->response.topics.size());
    }
    state->response.topics.push_back(std::move(out));
    state->plans.push_back(std::move(plan));
  }
  propose_all(
      std::move(proposals),
      [this, state](size_t entry, const Status& s) {
        auto& out = state->response.topics[entry];
        out.error_code = protocol::to_int(proposal_error(s));
        if (!s.ok()) {
          out.error_message = s.message();
          return;
        }
        const Topic* topic = topics_.find(out.name);
        if (topic == nullptr || topic->id != state->plans[entry].id) {
          // Another creation of the name was committed first.
          out.error_code = protocol::to_int(ErrorCode::kTopicAlreadyExists);
          out.error_message = "Topic '" + out.name + "' already exists.";
          return;
        }
        describe_created(state->plans[entry], topic, &out);
      },
      [this, state] { respond(*state->request, state->response); });
}

}  // namespace eddy::broker
