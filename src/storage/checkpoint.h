// Small metadata files of a partition directory, each a few int64 fields
// followed by a CRC-32C, replaced atomically (write "<name>.tmp", rename).
//
//   clean-shutdown.checkpoint  written last by a clean close: the active
//       segment's end, so that reopening trusts every index file instead of
//       scanning. Removed (durably) by open before anything is appended.
//   log-start-offset.checkpoint  the log start offset set by DeleteRecords
//       or time retention, when it lies above the first segment's base.
//   transactions.checkpoint  the offset of the first transactional or
//       control batch ever appended to the partition, written (durably)
//       before that batch is: without it, open scans nothing for
//       transactions; with it, open rebuilds the transaction index from the
//       batch headers at and after that offset.
//   transactions.snapshot  written by a clean close (before
//       clean-shutdown.checkpoint) in a partition with transactions: the
//       log end and the transaction index, so that the next open scans
//       nothing for them. Trusted only with a valid clean-shutdown
//       checkpoint and the same log end; removed by open.
//   leader-epoch-checkpoint  the (epoch, start offset) pairs of the epoch
//       index (epoch_index.h), written durably before the first batch of a
//       new epoch, after a truncation, and by a clean close when the log
//       start trimmed it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "port/status.h"

namespace eddy::storage {

inline constexpr const char* kCleanShutdownFile = "clean-shutdown.checkpoint";
inline constexpr const char* kLogStartOffsetFile = "log-start-offset.checkpoint";
inline constexpr const char* kTransactionsFile = "transactions.checkpoint";
inline constexpr const char* kTransactionsSnapshotFile = "transactions.snapshot";
inline constexpr const char* kLeaderEpochFile = "leader-epoch-checkpoint";

struct CleanShutdown {
  int64_t active_base_offset = 0;
  int64_t next_offset = 0;
  int64_t end_position = 0;
  int64_t log_start_offset = 0;
};

// durable: sync the file and the directory (clean shutdown); otherwise the
// rename alone makes the replacement atomic but not durable.
Status write_clean_shutdown(const std::string& directory, const CleanShutdown& checkpoint);
bool read_clean_shutdown(const std::string& directory, CleanShutdown* checkpoint);

Status write_log_start_offset(const std::string& directory, int64_t log_start_offset);
bool read_log_start_offset(const std::string& directory, int64_t* log_start_offset);

// Durable (file and directory synced).
Status write_first_transactional_offset(const std::string& directory, int64_t offset);
bool read_first_transactional_offset(const std::string& directory, int64_t* offset);

// Durable. payload: TransactionIndex::encode's bytes.
Status write_transactions_snapshot(const std::string& directory, int64_t log_end_offset,
                                   const std::vector<uint8_t>& payload);
bool read_transactions_snapshot(const std::string& directory, int64_t* log_end_offset, std::vector<uint8_t>* payload);

// Durable. fields: EpochIndex::to_fields(). false from the reader when the
// file is missing, damaged, or longer than any epoch index can be.
Status write_leader_epochs(const std::string& directory, const std::vector<int64_t>& fields);
bool read_leader_epochs(const std::string& directory, std::vector<int64_t>* fields);

}  // namespace eddy::storage
