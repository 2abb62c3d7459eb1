// The transaction coordinator (Kafka's TransactionCoordinator, pre-KIP-890
// protocol, KIP-98): every transactional id's producer id and epoch, its
// state (transaction_state.h) and the partitions and groups of its
// transaction; the markers that end a transaction; the sweeper that aborts
// transactions older than their timeout and forgets idle ids. A single node
// runs it from start to shutdown; a cluster runs it on the controller
// quorum's leader only, from its takeover (start) to its step-down (stop),
// with its state in the controller log (state_store.h).
//
// Answers use Kafka's newest error codes (PRODUCER_FENCED); the broker maps
// them to what each request version knows (INVALID_PRODUCER_EPOCH).
//
// Every transition is computed on a copy of the id's state, stored
// (StateStore::save), and only then made the id's state and answered; while
// a save is on its way the id answers CONCURRENT_TRANSACTIONS (Kafka's
// pending transition), so at most one save per id is in flight. A save that
// fails leaves the state unchanged and the client is told
// COORDINATOR_NOT_AVAILABLE; as its outcome may be unknown (a cluster's
// proposal), the id is read again from the store before its next use.
//
// Ending a transaction (EndTxn, a fence by InitProducerId, the timeout):
//   1. PrepareCommit / PrepareAbort is stored and EndTxn is answered; from
//      now on the transactional id answers CONCURRENT_TRANSACTIONS until
//      step 3.
//   2. A COMMIT or ABORT marker is written to every partition of the
//      transaction through MarkerSink::write, wherever the partition's
//      leader is; those refused are asked again every marker_retry_ms (a
//      deleted partition is skipped).
//   3. Once every marker is durable, CompleteCommit / CompleteAbort is
//      stored, and with it the offsets the transaction staged in its groups
//      are applied (commit) or dropped.
// A client starts its next transaction as soon as EndTxn is answered, so
// its AddPartitionsToTxn / AddOffsetsToTxn often arrives during steps 2-3:
// rather than CONCURRENT_TRANSACTIONS at once (which librdkafka retries
// after 20 ms, the Java client after its retry backoff), such a request is
// held until the completion ends and then answered as if it had just
// arrived; after kMaxParkMs it gets CONCURRENT_TRANSACTIONS after all (a
// leader refusing a marker), at most kMaxParkedPerId wait per id.
// A coordinator that starts (a restart, a new controller leader) finds an
// id in PrepareCommit / PrepareAbort and runs 2-3 again (a marker written
// twice ends nothing twice: readers skip it, the partition's producer state
// already has that epoch).
//
// Threading: REQUIRES every call (and every timer and callback) on the
// executor's loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
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

// How the coordinator reaches the partitions (the broker).
struct MarkerSink {
  enum class Outcome { kDurable, kPartitionGone, kFailed };
  // Called once per partition of a write: the marker is durable there
  // (replicated: committed by its group), the partition no longer exists,
  // or the marker was refused (why says so; the coordinator asks again).
  using PartitionDone = std::function<void(const meta::TopicPartition& tp, Outcome outcome, const std::string& why)>;
  // Appends a marker of type with the producer's id and epoch to each of
  // partitions, on its leader wherever that is; done once per partition,
  // on the loop thread, possibly before write returns.
  std::function<void(const std::vector<meta::TopicPartition>& partitions, protocol::ControlType type,
                     int64_t producer_id, int16_t epoch, PartitionDone done)>
      write;
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
  // PrepareAbort and starts the sweeper: the coordinator is active. A
  // single node: at startup, REQUIRES the partitions are open. A cluster:
  // when this node takes over as controller leader, REQUIRES everything
  // committed before is applied to the store.
  Status start();
  // Cancels the timers and forgets the state held (shutdown, a step-down):
  // inactive until the next start. Transactions being completed stay in
  // their Prepare state in the store and complete at the next start (here
  // or on the next controller leader). Saves still on their way answer
  // their clients NOT_COORDINATOR.
  void stop();
  // Between start() and stop().
  bool active() const { return active_; }

  // Answers: exactly once, on the loop thread, possibly before the call
  // returns. NOT_COORDINATOR while inactive.
  using Answer = std::function<void(protocol::ErrorCode)>;
  using InitAnswer = std::function<void(const InitResult&)>;

  // InitProducerId with a transactional id. expected_producer_id/epoch: -1
  // or the producer's (v3+, KIP-360).
  void init_producer_id(const std::string& transactional_id, int32_t timeout_ms, int64_t expected_producer_id,
                        int16_t expected_epoch, InitAnswer done);
  // AddPartitionsToTxn (after the broker checked the partitions exist).
  void add_partitions(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                      const std::vector<meta::TopicPartition>& partitions, Answer done);
  // AddOffsetsToTxn: the group's offsets become part of the transaction.
  void add_offsets(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                   const std::string& group_id, Answer done);
  // EndTxn.
  void end_transaction(const std::string& transactional_id, int64_t producer_id, int16_t epoch, bool commit,
                       Answer done);
  // TxnOffsetCommit may stage offsets in group_id: the producer's
  // transaction is Ongoing and added that group (Kafka's verification:
  // INVALID_PRODUCER_ID_MAPPING, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE;
  // NOT_COORDINATOR while inactive).
  protocol::ErrorCode verify_offset_commit(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                           const std::string& group_id) const;
  // Produce of a transactional batch: the producer id belongs to a
  // transactional id whose current epoch is epoch and whose Ongoing
  // transaction added tp (Kafka's produce verification:
  // INVALID_PRODUCER_ID_MAPPING, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE,
  // NOT_ENOUGH_REPLICAS while its markers are being written). Inactive (a
  // cluster node that does not coordinate): NONE, as Kafka's partition
  // leaders before KIP-890 take a transactional batch without asking the
  // coordinator; the partition's producer state still fences old epochs.
  protocol::ErrorCode verify_produce(int64_t producer_id, int16_t epoch, PartitionRef tp) const;

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

  static constexpr int64_t kMaxParkMs = 500;
  static constexpr size_t kMaxParkedPerId = 8;

 private:
  // A request of the next transaction waiting for a completion to end.
  struct Parked {
    uint64_t ticket = 0;
    std::function<void()> retry;  // the request again, once the completion ended
    Answer refuse;                // its answer when it is not retried
    port::Executor::TimerId timer = 0;
  };
  // A transaction between its Prepare state and its Complete state.
  struct Completion {
    uint64_t round = 0;  // names this completion's marker answers (stale ones are ignored)
    protocol::ControlType type = protocol::ControlType::kAbort;
    int64_t producer_id = -1;
    int16_t epoch = -1;
    PartitionSet outstanding;                 // markers asked for, not answered yet
    std::vector<meta::TopicPartition> refused;  // answered kFailed: asked again after marker_retry_ms
    bool finishing = false;                   // the Complete state is being stored
    port::Executor::TimerId retry_timer = 0;
    std::vector<Parked> parked;               // requests of the id's next transaction
  };

  // Stores next (completing the offsets of completed_groups, see
  // StateStore::save) and, when that worked, makes it the id's state; then
  // then(NONE), or then(the code the client gets) when the store failed or
  // the coordinator stopped meanwhile. then may run after the coordinator
  // is destroyed (a cluster's proposal answered late): one that touches
  // the coordinator checks alive_ first.
  void apply(const TransactionMetadata& next, std::set<std::string> completed_groups, Answer then);
  // The id's state (nullptr when unknown), read again from the store first
  // when a save of unknown outcome touched it; *failed when that read failed.
  const TransactionMetadata* current(const std::string& transactional_id, bool* failed);
  // The InitProducerId transition of an existing id (Kafka's
  // prepareInitProducerIdTransit): *next to store, or an error.
  protocol::ErrorCode init_transition(const TransactionMetadata& current, int32_t timeout_ms,
                                      int64_t expected_producer_id, int16_t expected_epoch, TransactionMetadata* next);
  // Checks shared by AddPartitionsToTxn and AddOffsetsToTxn; *m the id.
  protocol::ErrorCode check_ongoing_request(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                                            const TransactionMetadata** m);
  void add_to_transaction(const TransactionMetadata& current, const std::vector<meta::TopicPartition>& partitions,
                          const std::string* group, Answer done);
  // Ongoing -> PrepareCommit / PrepareAbort (stored), then the markers.
  // fence_epoch >= 0: the abort of a fence (InitProducerId, timeout) with
  // that epoch.
  void prepare_end(const TransactionMetadata& current, bool commit, int16_t fence_epoch, Answer done);
  // Steps 2-3 of the class comment (coordinator_markers.cc).
  void begin_completion(const TransactionMetadata& m);
  void send_markers(const std::string& transactional_id, std::vector<meta::TopicPartition> partitions);
  void on_marker(const std::string& transactional_id, uint64_t round, const meta::TopicPartition& tp,
                 MarkerSink::Outcome outcome, const std::string& why);
  void schedule_retry(const std::string& transactional_id, Completion& c);
  void retry(const std::string& transactional_id);
  void finish(const std::string& transactional_id);
  // Ends the completion of transactional_id (erased), then runs the
  // requests parked on it.
  void end_completion(std::map<std::string, Completion>::iterator it);
  // Holds a request of transactional_id's next transaction until its
  // completion ends (retry runs then) or kMaxParkMs pass (refuse gets
  // CONCURRENT_TRANSACTIONS); false when none is completing or
  // kMaxParkedPerId already wait.
  bool park(const std::string& transactional_id, std::function<void()> retry, Answer refuse);
  void schedule_sweeps();

  port::Executor& executor_;
  StateStore* store_;
  AllocateProducerId allocate_;
  MarkerSink sink_;
  CoordinatorOptions options_;
  std::map<std::string, TransactionMetadata> transactions_;
  std::unordered_map<int64_t, std::string> by_producer_id_;
  std::map<std::string, Completion> completing_;
  std::set<std::string> saving_;    // ids with a save on its way (answer CONCURRENT_TRANSACTIONS)
  std::set<std::string> doubtful_;  // ids a failed save touched: read again from the store before use
  port::Executor::TimerId abort_timer_ = 0;
  port::Executor::TimerId expiry_timer_ = 0;
  bool active_ = false;
  uint64_t generation_ = 0;  // bumped by start() and stop(): a save's answer from another is stale
  uint64_t rounds_ = 0;      // the last Completion::round given
  uint64_t parked_tickets_ = 0;  // the last Parked::ticket given
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // false once destroyed
};

}  // namespace eddy::txn
