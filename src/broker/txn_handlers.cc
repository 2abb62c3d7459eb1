// The transaction APIs, pre-KIP-890 (KIP-98): AddPartitionsToTxn v0-3,
// AddOffsetsToTxn v0-3, EndTxn v0-3, TxnOffsetCommit v0-3, and the admin
// side DescribeTransactions v0 and ListTransactions v0-1 (kafka-transactions).
// Authorization and per-partition errors as Kafka's KafkaApis; the
// decisions are the transaction coordinator's (txn/coordinator.h), the
// staged offsets the group coordinator's (group/group_offsets.h).
#include <algorithm>
#include <set>

#include "broker/broker.h"
#include "port/log.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;
using security::AclOperation;
using security::ResourceType;

namespace {

// Clients before these versions know INVALID_PRODUCER_EPOCH, not
// PRODUCER_FENCED (Kafka maps it the same way).
ErrorCode for_version(ErrorCode code, int16_t version, int16_t first_with_fenced) {
  return code == ErrorCode::kProducerFenced && version < first_with_fenced ? ErrorCode::kInvalidProducerEpoch : code;
}

}  // namespace

void Broker::handle_add_partitions_to_txn(RequestPtr request) {
  protocol::AddPartitionsToTxnRequest body;
  if (!decode(*request, &body)) return;
  const std::string& id = body.v3_and_below_transactional_id;
  protocol::AddPartitionsToTxnResponse response;
  const bool may_write_id = authorized(*request, AclOperation::kWrite, ResourceType::kTransactionalId, id);
  std::vector<meta::TopicPartition> partitions;
  bool refused = false;
  for (const auto& t : body.v3_and_below_topics) {
    auto& rt = response.results_by_topic_v3_and_below.emplace_back();
    rt.name = t.name;
    const bool may_write = may_write_id && authorized(*request, AclOperation::kWrite, ResourceType::kTopic, t.name);
    const Topic* topic = topics_.find(t.name);
    for (int32_t p : t.partitions) {
      auto& rp = rt.results_by_partition.emplace_back();
      rp.partition_index = p;
      ErrorCode e = ErrorCode::kNone;
      if (!may_write_id) e = ErrorCode::kTransactionalIdAuthorizationFailed;
      else if (!may_write) e = ErrorCode::kTopicAuthorizationFailed;
      else if (topic == nullptr || p < 0 || p >= static_cast<int32_t>(topic->partitions.size()))
        e = ErrorCode::kUnknownTopicOrPartition;
      else partitions.push_back(meta::TopicPartition{t.name, p});
      refused = refused || e != ErrorCode::kNone;
      rp.partition_error_code = protocol::to_int(e);
    }
  }
  // One refused partition fails the whole request: the others were not
  // attempted (as Kafka).
  auto answer = [this](Request& request, protocol::AddPartitionsToTxnResponse response, ErrorCode verdict) {
    for (auto& rt : response.results_by_topic_v3_and_below) {
      for (auto& rp : rt.results_by_partition) {
        if (rp.partition_error_code == 0) rp.partition_error_code = protocol::to_int(verdict);
      }
    }
    respond(request, response);
  };
  if (refused) return answer(*request, std::move(response), ErrorCode::kOperationNotAttempted);
  std::shared_ptr<Request> parked(std::move(request));
  txn_->add_partitions(id, body.v3_and_below_producer_id, body.v3_and_below_producer_epoch, partitions,
                       [parked, answer, response = std::move(response)](ErrorCode code) mutable {
                         answer(*parked, std::move(response), for_version(code, parked->version(), 2));
                       });
}

void Broker::handle_add_offsets_to_txn(RequestPtr request) {
  protocol::AddOffsetsToTxnRequest body;
  if (!decode(*request, &body)) return;
  auto answer = [this](Request& request, ErrorCode code) {
    protocol::AddOffsetsToTxnResponse response;
    response.error_code = protocol::to_int(code);
    respond(request, response);
  };
  if (!authorized(*request, AclOperation::kWrite, ResourceType::kTransactionalId, body.transactional_id)) {
    return answer(*request, ErrorCode::kTransactionalIdAuthorizationFailed);
  }
  if (!may_use_group(*request, AclOperation::kRead, body.group_id)) {
    return answer(*request, ErrorCode::kGroupAuthorizationFailed);
  }
  if (body.group_id.empty()) return answer(*request, ErrorCode::kInvalidGroupId);
  std::shared_ptr<Request> parked(std::move(request));
  txn_->add_offsets(body.transactional_id, body.producer_id, body.producer_epoch, body.group_id,
                    [parked, answer](ErrorCode code) { answer(*parked, for_version(code, parked->version(), 2)); });
}

void Broker::handle_end_txn(RequestPtr request) {
  protocol::EndTxnRequest body;
  if (!decode(*request, &body)) return;
  auto answer = [this, commit = body.committed, id = body.transactional_id](Request& request, ErrorCode code) {
    if (code != ErrorCode::kNone) {
      EDDY_LOG_DEBUG("EndTxn ({}) of '{}' from {}: {}", commit ? "commit" : "abort", id, request.client.peer,
                     protocol::error_name(code));
    }
    protocol::EndTxnResponse response;
    response.error_code = protocol::to_int(code);
    respond(request, response);
  };
  if (!authorized(*request, AclOperation::kWrite, ResourceType::kTransactionalId, body.transactional_id)) {
    return answer(*request, ErrorCode::kTransactionalIdAuthorizationFailed);
  }
  std::shared_ptr<Request> parked(std::move(request));
  txn_->end_transaction(body.transactional_id, body.producer_id, body.producer_epoch, body.committed,
                        [parked, answer](ErrorCode code) { answer(*parked, for_version(code, parked->version(), 2)); });
}

void Broker::handle_txn_offset_commit(RequestPtr request) {
  protocol::TxnOffsetCommitRequest body;
  if (!decode(*request, &body)) return;
  const std::string group = body.group_id;
  const int64_t producer_id = body.producer_id;
  protocol::TxnOffsetCommitResponse response = txn_offset_commit(*request, std::move(body));
  if (controller_ == nullptr) {
    respond(*request, response);
    return;
  }
  replicate_txn_offsets(std::move(request), group, producer_id, std::move(response));
}

protocol::TxnOffsetCommitResponse Broker::txn_offset_commit(const Request& request,
                                                            protocol::TxnOffsetCommitRequest body) {
  auto refuse_all = [&](ErrorCode code) {
    protocol::TxnOffsetCommitResponse r;
    for (const auto& t : body.topics) {
      auto& rt = r.topics.emplace_back();
      rt.name = t.name;
      for (const auto& p : t.partitions) rt.partitions.push_back({p.partition_index, protocol::to_int(code), {}});
    }
    return r;
  };
  if (!authorized(request, AclOperation::kWrite, ResourceType::kTransactionalId, body.transactional_id)) {
    return refuse_all(ErrorCode::kTransactionalIdAuthorizationFailed);
  }
  if (!may_use_group(request, AclOperation::kRead, body.group_id)) {
    return refuse_all(ErrorCode::kGroupAuthorizationFailed);
  }
  // Topics the client may not READ are refused; the rest go to the group.
  protocol::TxnOffsetCommitRequest unreadable;
  auto readable_end = std::stable_partition(body.topics.begin(), body.topics.end(), [&](const auto& t) {
    return authorized(request, AclOperation::kRead, ResourceType::kTopic, t.name);
  });
  std::move(readable_end, body.topics.end(), std::back_inserter(unreadable.topics));
  body.topics.erase(readable_end, body.topics.end());
  const ErrorCode verdict =
      txn_->verify_offset_commit(body.transactional_id, body.producer_id, body.producer_epoch, body.group_id);
  protocol::TxnOffsetCommitResponse response =
      coordinator_->commit_transactional_offsets(body, request.version(), verdict);
  for (const auto& t : unreadable.topics) {
    auto& rt = response.topics.emplace_back();
    rt.name = t.name;
    for (const auto& p : t.partitions) {
      rt.partitions.push_back({p.partition_index, protocol::to_int(ErrorCode::kTopicAuthorizationFailed), {}});
    }
  }
  return response;
}

void Broker::handle_describe_transactions(RequestPtr request) {
  protocol::DescribeTransactionsRequest body;
  if (!decode(*request, &body)) return;
  protocol::DescribeTransactionsResponse response;
  for (const std::string& id : body.transactional_ids) {
    auto& state = response.transaction_states.emplace_back();
    state.transactional_id = id;
    const txn::TransactionMetadata* m = txn_->find(id);
    ErrorCode code = ErrorCode::kNone;
    if (!authorized(*request, AclOperation::kDescribe, ResourceType::kTransactionalId, id)) {
      code = ErrorCode::kTransactionalIdAuthorizationFailed;
    } else if (id.empty()) {
      code = ErrorCode::kInvalidRequest;
    } else if (!txn_->active()) {
      code = ErrorCode::kNotCoordinator;  // a cluster node that is not the controller leader
    } else if (m == nullptr || m->state == txn::TransactionState::kDead) {
      code = ErrorCode::kTransactionalIdNotFound;
    }
    state.error_code = protocol::to_int(code);
    if (code != ErrorCode::kNone) continue;
    state.transaction_state = std::string(txn::state_name(m->state));
    state.transaction_timeout_ms = m->timeout_ms;
    state.transaction_start_time_ms = m->start_ms;
    state.producer_id = m->producer_id;
    state.producer_epoch = m->producer_epoch;
    for (const meta::TopicPartition& tp : m->partitions) {
      // Only topics the client may describe are shown (as Kafka).
      if (!authorized(*request, AclOperation::kDescribe, ResourceType::kTopic, tp.topic, true)) continue;
      if (state.topics.empty() || state.topics.back().topic != tp.topic) {
        state.topics.emplace_back().topic = tp.topic;
      }
      state.topics.back().partitions.push_back(tp.partition);
    }
  }
  respond(*request, response);
}

void Broker::handle_list_transactions(RequestPtr request) {
  protocol::ListTransactionsRequest body;
  if (!decode(*request, &body)) return;
  protocol::ListTransactionsResponse response;
  std::set<txn::TransactionState> states;
  for (const std::string& name : body.state_filters) {
    if (auto s = txn::state_from_name(name)) states.insert(*s);
    else response.unknown_state_filters.push_back(name);
  }
  const std::set<int64_t> producer_ids(body.producer_id_filters.begin(), body.producer_id_filters.end());
  const int64_t now = executor_.now_ms();
  // A cluster node that does not coordinate lists nothing (for_each visits
  // nothing), as a Kafka broker that leads no __transaction_state partition.
  txn_->for_each([&](const txn::TransactionMetadata& m) {
    if (m.state == txn::TransactionState::kDead) return;
    if (!producer_ids.empty() && producer_ids.count(m.producer_id) == 0) return;
    if (!body.state_filters.empty() && states.count(m.state) == 0) return;
    // v1: transactions running longer than duration_filter ms (Kafka's
    // test, which an id without a transaction, start -1, also passes).
    if (body.duration_filter >= 0 && now - m.start_ms <= body.duration_filter) return;
    if (!authorized(*request, AclOperation::kDescribe, ResourceType::kTransactionalId, m.transactional_id, true)) {
      return;
    }
    auto& t = response.transaction_states.emplace_back();
    t.transactional_id = m.transactional_id;
    t.producer_id = m.producer_id;
    t.transaction_state = std::string(txn::state_name(m.state));
  });
  respond(*request, response);
}

}  // namespace eddy::broker
