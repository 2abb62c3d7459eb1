// raft/quorum_state_store.h — where a replica keeps what it must not forget
// across a crash: its epoch, whom it voted for in that epoch, the leader it
// knows of, and whether it is still catching up after a wiped disk.
//
// Invariant the replica relies on: write() returns ok only once the state is
// durable, and a later read() returns the last state written (or, after a
// crash during write(), the one before it — never a mix).
#pragma once

#include <string>

#include "port/status.h"
#include "raft/types.h"

namespace eddy::raft {

struct QuorumState {
  Epoch epoch = 0;
  NodeId voted_for = kNoNode;  // in epoch; kNoNode when no vote was cast
  NodeId leader_id = kNoNode;  // of epoch; kNoNode when unknown
  // True from a start on a disk that holds no quorum state (wiped) until the
  // replica has caught up to a leader's high watermark: until then it
  // neither votes nor stands for election (see README.md, wiped disks).
  bool recovering = false;

  friend bool operator==(const QuorumState&, const QuorumState&) = default;
};

class QuorumStateStore {
 public:
  virtual ~QuorumStateStore() = default;
  // kNotFound when no state was ever written (a fresh or wiped disk).
  virtual Status read(QuorumState* out) = 0;
  virtual Status write(const QuorumState& state) = 0;
};

// In memory; survives a simulated crash because the object does (tests).
class MemoryQuorumStateStore final : public QuorumStateStore {
 public:
  Status read(QuorumState* out) override;
  Status write(const QuorumState& state) override;
  void wipe() { present_ = false; }

 private:
  bool present_ = false;
  QuorumState state_;
};

// A small text file ("quorum-state") in a directory, replaced atomically:
// written to "quorum-state.tmp", synced, renamed over, directory synced.
class FileQuorumStateStore final : public QuorumStateStore {
 public:
  explicit FileQuorumStateStore(std::string directory) : directory_(std::move(directory)) {}
  Status read(QuorumState* out) override;
  Status write(const QuorumState& state) override;

 private:
  std::string directory_;
};

// The file's text, and its parser (kCorruption for anything else).
std::string format_quorum_state(const QuorumState& state);
Status parse_quorum_state(const std::string& text, QuorumState* out);

}  // namespace eddy::raft
