// The transaction coordinator (Kafka's TransactionCoordinator, pre-KIP-890
// protocol, KIP-98) of a single node: every transactional id's producer id
// and epoch, its state (transaction_state.h) and the partitions and groups
// of its transaction; the markers that end a transaction; the sweeper that
// aborts transactions older than their timeout and forgets idle ids.
//
// Answers use Kafka's newest error codes (PRODUCER_FENCED); the broker maps
// them to what each request version knows (INVALID_PRODUCER_EPOCH).
//
// Ending a transaction (EndTxn, a fence by InitProducerId, the timeout):
//   1. PrepareCommit / PrepareAbort is stored (StateStore::save) and EndTxn
//      is answered; from now on the transactional id answers
//      CONCURRENT_TRANSACTIONS until step 4.
//   2. A COMMIT or ABORT marker is written to every partition of the
//      transaction through MarkerSink::write (retried every
//      marker_retry_ms while a partition refuses it; a deleted partition
//      is skipped).
//   3. Once every marker is durable (on_partition_durable), the offsets the
//      transaction staged in its groups are applied (commit) or dropped.
//   4. CompleteCommit / CompleteAbort is stored.
// A restart finds an id in PrepareCommit / PrepareAbort and runs 2-4 again
// (a marker written twice ends nothing twice: readers skip it, the
// partition's producer state already has that epoch).
//
// Threading: REQUIRES every call (and every timer) on the executor's loop
// thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "meta/topic_partition.h"
#include "port/executor.h"
#include "port/status.h"
#include "protocol/control_batch.h"
#include "protocol/errors.h"
#include "txn/state_store.h"
#include "txn/transaction_metadata.h"

namespace eddy::txn {

struct CoordinatorOptions {
  int32_t max_timeout_ms = 900000;                       // transaction.max.timeout.ms
  int64_t transactional_id_expiration_ms = 604800000;    // transactional.id.expiration.ms
  int64_t abort_timed_out_interval_ms = 10000;           // transaction.abort.timed.out.transaction.cleanup.interval.ms
  int64_t remove_expired_interval_ms = 3600000;          // transaction.remove.expired.transaction.cleanup.interval.ms
  int64_t marker_retry_ms = 1000;                        // a refused marker is written again after this
};

// How the coordinator reaches the partitions and groups (the broker).
struct MarkerSink {
  enum class Outcome { kWritten, kPartitionGone, kFailed };
  // Appends a marker of type with the producer's id and epoch to tp; sets
  // *offset (kWritten) or *why (kFailed).
  std::function<Outcome(const meta::TopicPartition& tp, protocol::ControlType type, int64_t producer_id,
                        int16_t epoch, int64_t* offset, std::string* why)>
      write;
  // Whether offset of tp is on disk (true when the partition is gone).
  std::function<bool(const meta::TopicPartition& tp, int64_t offset)> durable;
  // Applies (commit) or drops the offsets producer_id staged in group.
  std::function<Status(const std::string& group, int64_t producer_id, bool commit)> complete_offsets;
};

struct InitResult {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
};

class Coordinator {
 public:
  using AllocateProducerId = std::function<Status(int64_t* id)>;

  // REQUIRES executor and store outlive the coordinator.
  Coordinator(port::Executor& executor, StateStore* store, AllocateProducerId allocate, MarkerSink sink,
              CoordinatorOptions options);
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Loads the stored state, completes transactions found in PrepareCommit /
  // PrepareAbort and starts the sweeper. REQUIRES the partitions are open.
  Status start();
  // Cancels the timers (shutdown). Transactions being completed stay in
  // their Prepare state on disk and complete at the next start.
  void stop();

  // InitProducerId with a transactional id. expected_producer_id/epoch: -1
  // or the producer's (v3+, KIP-360).
  InitResult init_producer_id(const std::string& transactional_id, int32_t timeout_ms, int64_t expected_producer_id,
                              int16_t expected_epoch);
  // AddPartitionsToTxn (after the broker checked the partitions exist).
  protocol::ErrorCode add_partitions(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                     const std::vector<meta::TopicPartition>& partitions);
  // AddOffsetsToTxn: the group's offsets become part of the transaction.
  protocol::ErrorCode add_offsets(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                  const std::string& group_id);
  // EndTxn.
  protocol::ErrorCode end_transaction(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                      bool commit);
  // TxnOffsetCommit may stage offsets in group_id: the producer's
  // transaction is Ongoing and added that group (Kafka's verification:
  // INVALID_PRODUCER_ID_MAPPING, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE).
  protocol::ErrorCode verify_offset_commit(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                           const std::string& group_id) const;
  // Produce of a transactional batch: the producer id belongs to a
  // transactional id whose current epoch is epoch and whose Ongoing
  // transaction added tp (Kafka's produce verification:
  // INVALID_PRODUCER_ID_MAPPING, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE,
  // NOT_ENOUGH_REPLICAS while its markers are being written).
  protocol::ErrorCode verify_produce(int64_t producer_id, int16_t epoch, PartitionRef tp) const;

  // A partition's durable offset moved (the broker's flusher report).
  void on_partition_durable();

  // The sweeper's passes (timers call them; public for tests).
  void abort_timed_out_transactions();
  void remove_expired_transactional_ids();

  // DescribeTransactions / ListTransactions and tests.
  const TransactionMetadata* find(const std::string& transactional_id) const;
  template <typename Visit>
  void for_each(Visit visit) const {
    for (const auto& [id, m] : transactions_) visit(m);
  }
  // Transactions whose markers are being written.
  size_t completing() const { return completing_.size(); }

 private:
  // A transaction between its Prepare state and its Complete state.
  struct Completion {
    protocol::ControlType type = protocol::ControlType::kAbort;
    int64_t producer_id = -1;
    int16_t epoch = -1;
    std::vector<meta::TopicPartition> unwritten;                    // markers still to write
    std::vector<std::pair<meta::TopicPartition, int64_t>> unsynced;  // written, not yet durable
    port::Executor::TimerId retry_timer = 0;
  };

  // Stores next and, when that worked, makes it the id's state.
  protocol::ErrorCode apply(const TransactionMetadata& next);
  // The InitProducerId transition of an existing id (Kafka's
  // prepareInitProducerIdTransit): *next to store, or an error.
  protocol::ErrorCode init_transition(const TransactionMetadata& current, int32_t timeout_ms,
                                      int64_t expected_producer_id, int16_t expected_epoch, TransactionMetadata* next);
  // Checks shared by AddPartitionsToTxn and AddOffsetsToTxn; *m the id.
  protocol::ErrorCode check_ongoing_request(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                            const TransactionMetadata** m) const;
  protocol::ErrorCode add_to_transaction(const TransactionMetadata& current,
                                         const std::vector<meta::TopicPartition>& partitions,
                                         const std::string* group);
  // Ongoing -> PrepareCommit / PrepareAbort (stored), then the markers.
  // fence_epoch >= 0: the abort of a fence (InitProducerId, timeout) with
  // that epoch.
  protocol::ErrorCode prepare_end(const TransactionMetadata& current, bool commit, int16_t fence_epoch);
  // Steps 2-4 of the class comment (coordinator_markers.cc).
  void begin_completion(const TransactionMetadata& m);
  void write_markers(const std::string& transactional_id);
  void schedule_marker_retry(const std::string& transactional_id, Completion& c);
  void maybe_finish(const std::string& transactional_id);
  bool finish(const std::string& transactional_id, const Completion& c);
  void schedule_sweeps();

  port::Executor& executor_;
  StateStore* store_;
  AllocateProducerId allocate_;
  MarkerSink sink_;
  CoordinatorOptions options_;
  std::map<std::string, TransactionMetadata> transactions_;
  std::unordered_map<int64_t, std::string> by_producer_id_;
  std::map<std::string, Completion> completing_;
  port::Executor::TimerId abort_timer_ = 0;
  port::Executor::TimerId expiry_timer_ = 0;
  bool stopped_ = false;
};

}  // namespace eddy::txn
