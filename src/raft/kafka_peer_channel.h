// raft/kafka_peer_channel.h — a PeerChannel over one Kafka connection to a
// voter's controller listener (Eddy's own blocking client): each core
// request becomes the Kafka RPC of kafka_wire.h, its answer the core's.
// The same connection carries any group's requests as a GroupChannel (a
// node's partition groups, raft/peer_senders.h): the group named per call;
// or, as a FetchChannel (raft/peer_fetchers.h), the fetches of many groups
// in one FetchRequest (one channel is used for one of these roles only).
// The connection opens on first use and after any failure; a failed call
// closes it (a late answer must never meet the next request).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "client/broker_address.h"
#include "client/broker_connection.h"
#include "raft/kafka_wire.h"
#include "raft/peer_fetchers.h"
#include "raft/peer_senders.h"
#include "raft/quorum_runtime.h"

namespace eddy::raft {

struct KafkaPeerOptions {
  client::BrokerAddress address;
  GroupAddress group;  // PeerChannel::call's; GroupChannel::call names its own
  int64_t request_timeout_ms = 2000;  // per call, the connect included
  int32_t fetch_max_bytes = 1 << 20;
  std::string client_id = "eddy-raft";
};

class KafkaPeerChannel final : public PeerChannel, public GroupChannel, public FetchChannel {
 public:
  explicit KafkaPeerChannel(KafkaPeerOptions options);
  Status call(const Message& request, Payload* response, bool* answered) override {
    return call(options_.group, request, response, answered);
  }
  Status call(const GroupAddress& group, const Message& request, Payload* response, bool* answered) override;
  // The call's deadline is max_wait_ms past request_timeout_ms (the leader
  // may hold the request that long).
  Status fetch(const std::vector<GroupFetch>& fetches, int32_t max_wait_ms,
               std::vector<std::optional<Payload>>* answers) override;
  void interrupt() override;

 private:
  Status ensure_open(client::Deadline deadline);
  template <typename Req, typename Resp>
  Status exchange(const Req& request, int16_t version, Resp* response, client::Deadline deadline);

  KafkaPeerOptions options_;
  std::mutex mutex_;                        // guards transport_ against interrupt()
  client::Transport* transport_ = nullptr;  // owned by connection_
  std::unique_ptr<client::BrokerConnection> connection_;
  std::atomic<bool> interrupted_{false};
  int64_t next_connect_ms_ = 0;  // backoff after a failed connect
};

}  // namespace eddy::raft
