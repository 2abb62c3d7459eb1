// Transactional offsets (TxnOffsetCommit): staged per (group, producer id)
// in the meta store until the transaction ends, then applied to the
// group's committed offsets (COMMIT) or dropped (ABORT), in one SQLite
// transaction (meta/pending_offset_store.h). OffsetFetch with
// require_stable sees them as UNSTABLE_OFFSET_COMMIT.
#include <algorithm>

#include "group/group_offsets.h"
#include "port/log.h"

namespace eddy::group {

using protocol::ErrorCode;
using protocol::to_int;

protocol::TxnOffsetCommitResponse GroupOffsets::commit_transactional(const protocol::TxnOffsetCommitRequest& req,
                                                                     int16_t version, ErrorCode txn_verdict,
                                                                     int64_t now_ms) {
  protocol::TxnOffsetCommitResponse r;
  std::vector<meta::CommittedOffset> batch;
  for (const auto& topic : req.topics) {
    protocol::TxnOffsetCommitResponse::TxnOffsetCommitResponseTopic rt;
    rt.name = topic.name;
    for (const auto& p : topic.partitions) {
      ErrorCode e = txn_verdict;
      if (e == ErrorCode::kNone && !partition_exists_(topic.name, p.partition_index)) {
        e = ErrorCode::kUnknownTopicOrPartition;
      } else if (e == ErrorCode::kNone &&
                 p.committed_metadata.value_or("").size() > static_cast<size_t>(metadata_max_bytes_)) {
        e = ErrorCode::kOffsetMetadataTooLarge;
      }
      if (e == ErrorCode::kNone) {
        meta::CommittedOffset c;
        c.topic = topic.name;
        c.partition = p.partition_index;
        c.offset = p.committed_offset;
        c.leader_epoch = version >= 2 ? p.committed_leader_epoch : -1;
        c.metadata = p.committed_metadata.value_or("");
        c.commit_timestamp_ms = now_ms;
        batch.push_back(std::move(c));
      }
      protocol::TxnOffsetCommitResponse::TxnOffsetCommitResponsePartition rp;
      rp.partition_index = p.partition_index;
      rp.error_code = to_int(e);
      rt.partitions.push_back(rp);
    }
    r.topics.push_back(std::move(rt));
  }
  if (batch.empty()) return r;
  Status s = meta_->pending_offsets().stage(req.group_id, req.producer_id, batch);
  if (!s.ok()) {
    EDDY_LOG_WARN("group {}: staging {} transactional offsets of producer {}: {}", req.group_id, batch.size(),
                  req.producer_id, s.message());
    for (auto& t : r.topics) {
      for (auto& p : t.partitions) {
        if (p.error_code == 0) p.error_code = to_int(ErrorCode::kCoordinatorNotAvailable);
      }
    }
  }
  return r;
}

Status GroupOffsets::complete_transaction(const std::string& group, int64_t producer_id, bool commit) {
  int64_t rows = 0;
  Status s = meta_->pending_offsets().complete(group, producer_id, commit, &rows);
  if (s.ok() && rows > 0) {
    EDDY_LOG_DEBUG("group {}: {} transactional offsets of producer {} {}", group, rows, producer_id,
                   commit ? "committed" : "dropped");
  }
  return s;
}

template <typename Topic>
void GroupOffsets::mark_unstable(const std::string& group, std::vector<Topic>* topics, ErrorCode* error) {
  std::vector<meta::TopicPartition> pending;
  if (!meta_->pending_offsets().pending_partitions(group, &pending).ok()) {
    *error = ErrorCode::kCoordinatorNotAvailable;
    return;
  }
  if (pending.empty()) return;
  for (auto& t : *topics) {
    for (auto& p : t.partitions) {
      if (std::binary_search(pending.begin(), pending.end(), meta::TopicPartition{t.name, p.partition_index})) {
        p.error_code = to_int(ErrorCode::kUnstableOffsetCommit);
        p.committed_offset = -1;
      }
    }
  }
}

template void GroupOffsets::mark_unstable(const std::string&, std::vector<protocol::OffsetFetchResponse::OffsetFetchResponseTopic>*,
                                          ErrorCode*);
template void GroupOffsets::mark_unstable(const std::string&,
                                          std::vector<protocol::OffsetFetchResponse::OffsetFetchResponseTopics>*,
                                          ErrorCode*);

}  // namespace eddy::group
