// Producer ids in a cluster: the controller log gives each node blocks of
// ids, as Kafka's controller does (AllocateProducerIds, ProducerIdsRecord),
// so that no two nodes hand out the same id, nor a node restarted on a
// wiped disk one it handed out before.
//
// The leader proposes a ProducerIdsRecord for [start, start + 1000) with
// start at or past the end of every block applied and every block it
// proposed itself. Applied in log order on every node, a record whose start
// is below the applied end is stale (a leader proposed it before applying
// an earlier block that overlaps it) and gives nothing; any other gives its
// block, and the applied end moves to the block's end. The outcome depends
// on the log alone, so every node agrees which records gave a block; each
// block is answered at most once, by the leader that proposed it (a stale
// proposal is answered with a retriable code and asked for again).
//
// A node uses a block only in the process that received it
// (ProducerIdBlocks); what a restart or a lost answer leaves of a block is
// never handed out.
#include <limits>

#include "app/cluster_controller.h"
#include "port/log.h"
#include "protocol/generated/allocate_producer_ids.h"

namespace eddy::app {
namespace {

using protocol::ErrorCode;

// Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE.
constexpr int32_t kProducerIdBlockSize = 1000;

ErrorCode proposal_failure(const Status& s) {
  if (s.code() == Status::Code::kTimeout) return ErrorCode::kRequestTimedOut;
  return ErrorCode::kNotController;
}

}  // namespace

bool ClusterController::next_producer_id(int64_t* id) {
  const bool given = producer_ids_.next(id);
  ask_for_producer_ids();
  return given;
}

void ClusterController::ask_for_producer_ids() {
  if (failed_ || asking_for_producer_ids_ || !producer_ids_.wants_block() || leader_id() < 0) return;
  asking_for_producer_ids_ = true;
  const int32_t self = quorum_->config().node_id;
  auto received = [this](ErrorCode code, int64_t start, int32_t len) {
    asking_for_producer_ids_ = false;
    if (code != ErrorCode::kNone || len <= 0) {
      EDDY_LOG_DEBUG("producer ids: no block from the controller leader ({}); asking again",
                     protocol::error_name(code));
      return;  // the next InitProducerId or tick asks again
    }
    producer_ids_.add(start, len);
    EDDY_LOG_DEBUG("producer ids: block [{}, {}) for this node", start, start + len);
    ask_for_producer_ids();  // a block below a tenth of its size
  };
  if (is_leader()) {
    give_producer_ids(self, std::move(received));
    return;
  }
  protocol::AllocateProducerIdsRequest request;
  request.broker_id = self;
  request.broker_epoch = -1;
  ControllerQuorum* quorum = quorum_;
  auto call = [quorum, request, received](client::BrokerConnection& leader, client::Deadline deadline) {
    protocol::AllocateProducerIdsResponse answer;
    Status s = leader.call(request, 0, &answer, deadline);
    if (!s.ok()) return s;
    quorum->post([received, answer] {
      received(static_cast<ErrorCode>(answer.error_code), answer.producer_id_start, answer.producer_id_len);
    });
    return Status();
  };
  auto failed = [quorum, received](const Status& why) {
    EDDY_LOG_DEBUG("producer ids: asking the controller leader: {}", why.to_string());
    quorum->post([received] { received(ErrorCode::kNotController, -1, 0); });
  };
  quorum_->forward_to_leader(leader_id(), std::move(call), std::move(failed));
}

void ClusterController::give_producer_ids(int32_t node_id, ControllerQuorum::ProducerIdsGiven done) {
  int64_t applied_end = 0;
  if (Status s = meta_->cluster().producer_ids_end(&applied_end); !s.ok() || failed_ || !is_leader()) {
    done(s.ok() ? ErrorCode::kNotController : ErrorCode::kUnknownServerError, -1, 0);
    return;
  }
  const int64_t start = std::max(applied_end, proposed_producer_ids_end_);
  if (start > std::numeric_limits<int64_t>::max() - kProducerIdBlockSize) {
    EDDY_LOG_ERROR("producer ids: exhausted (the next block would start at {})", start);
    done(ErrorCode::kUnknownServerError, -1, 0);
    return;
  }
  proposed_producer_ids_end_ = start + kProducerIdBlockSize;
  ++giving_producer_ids_;
  const std::string payload =
      broker::encode_controller_record(protocol::ProducerIdsRecord{node_id, start, kProducerIdBlockSize, {}});
  quorum_->propose(payload, [this, done = std::move(done)](const Status& s, raft::Offset offset) {
    --giving_producer_ids_;
    // Ok: the entry at offset was applied (before this runs), which decided it.
    auto it = s.ok() ? applied_producer_ids_.find(offset) : applied_producer_ids_.end();
    if (it == applied_producer_ids_.end()) {
      done(s.ok() ? ErrorCode::kUnknownServerError : proposal_failure(s), -1, 0);
    } else {
      const AppliedBlock block = it->second;
      done(block.len > 0 ? ErrorCode::kNone : ErrorCode::kCoordinatorLoadInProgress, block.start, block.len);
    }
    // Proposals resolve in offset order: nothing below offset is looked up again.
    applied_producer_ids_.erase(applied_producer_ids_.begin(), applied_producer_ids_.upper_bound(offset));
    if (giving_producer_ids_ == 0) applied_producer_ids_.clear();
  });
}

Status ClusterController::apply_producer_ids(raft::Offset offset, const protocol::ProducerIdsRecord& record) {
  int64_t end = 0;
  if (Status s = meta_->cluster().producer_ids_end(&end); !s.ok()) return s;
  const bool well_formed = record.producer_id_start >= 0 && record.producer_id_len >= 0 &&
                           record.producer_id_start <= std::numeric_limits<int64_t>::max() - record.producer_id_len;
  if (!well_formed) EDDY_LOG_ERROR("controller log: a ProducerIdsRecord out of range at {} gives no block", offset);
  const bool gives = well_formed && record.producer_id_start >= end;
  if (gives) {
    if (Status s = meta_->cluster().set_producer_ids_end(record.producer_id_start + record.producer_id_len); !s.ok()) {
      return s;
    }
  }
  // Only while this node's own proposals wait (the map stays empty otherwise).
  if (giving_producer_ids_ > 0) {
    applied_producer_ids_[offset] = AppliedBlock{record.producer_id_start, gives ? record.producer_id_len : 0};
  }
  return Status();
}

}  // namespace eddy::app
