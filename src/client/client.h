// A blocking Kafka client: bootstrap, one connection per broker (opened on
// demand from the metadata), metadata refresh and leader lookup, and typed
// request/response calls with version negotiation and a deadline. Admin,
// Producer and Consumer build on it.
//
// Not thread-safe: one thread uses a Client at a time.
//
//   ClientOptions options;
//   Status p = parse_broker_list("127.0.0.1:9092", &options.bootstrap);
//   Client client(options);
//   Status s = client.bootstrap();
//   const TopicInfo* topic;
//   s = client.topic_metadata("t", /*allow_auto_create=*/false, &topic);
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "client/broker_connection.h"
#include "client/cluster_metadata.h"
#include "client/deadline.h"
#include "client/transport.h"
#include "port/status.h"
#include "protocol/errors.h"

namespace eddy::client {

struct ClientOptions {
  std::vector<BrokerAddress> bootstrap;
  ConnectionOptions connection;
  int64_t connect_timeout_ms = 10000;  // per connection attempt (incl. ApiVersions)
  int64_t request_timeout_ms = 30000;  // per request/response
  TransportFactory transport_factory;  // empty: make_tcp_transport
};

class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const ClientOptions& options() const { return options_; }
  Deadline request_deadline() const { return Deadline::after_ms(options_.request_timeout_ms); }

  // Connects to the first bootstrap address that answers ApiVersions; the
  // error of the last attempt when none does.
  Status bootstrap();

  // Fetches metadata for `topics` (all topics when null) and updates
  // metadata(). allow_auto_create is honoured from Metadata v4 on (brokers
  // with auto.create.topics.enable create the named topics).
  Status refresh_metadata(const std::vector<std::string>* topics, bool allow_auto_create);
  const ClusterMetadata& metadata() const { return metadata_; }

  // Refreshes metadata for one topic and points *out at it; kNotFound when
  // the broker does not know it (and did not create it).
  Status topic_metadata(std::string_view topic, bool allow_auto_create, const TopicInfo** out);

  // A connection to node_id, opened on demand at the endpoint the metadata
  // advertises; node_id < 0 means any broker (the bootstrap connection).
  Status connection(int32_t node_id, BrokerConnection** out);

  // One request/response with node_id (< 0: any broker) at the highest
  // version both sides speak: fill(request, version) sets the fields for
  // that version.
  template <typename Req, typename Resp, typename Fill>
  Status call(int32_t node_id, Fill&& fill, Resp* response);

  // Closes every connection.
  void close();

  // Checks every open connection without a request pending (without
  // blocking or sending): the first one the broker closed or reset since,
  // as kNetwork. Lets a quiet user notice a lost broker before it has
  // something to send.
  Status check_idle_connections();

 private:
  Status any_connection(BrokerConnection** out);
  std::unique_ptr<BrokerConnection> new_connection() const;

  ClientOptions options_;
  ClusterMetadata metadata_;
  std::unique_ptr<BrokerConnection> bootstrap_;  // before its node id is known
  std::map<int32_t, std::unique_ptr<BrokerConnection>> nodes_;
};

template <typename Req, typename Resp, typename Fill>
Status Client::call(int32_t node_id, Fill&& fill, Resp* response) {
  BrokerConnection* conn = nullptr;
  Status s = connection(node_id, &conn);
  if (!s.ok()) return s;
  int16_t version = 0;
  s = conn->negotiate<Req>(&version);
  if (!s.ok()) return s.with_context(conn->address().to_string());
  Req request;
  fill(request, version);
  return conn->call(request, version, response, request_deadline());
}

}  // namespace eddy::client
