// Version negotiation: which version of each API to speak with a broker.
//
// The client implements a range of versions per API (client_version_range:
// the versions whose fields this client's code fills and reads correctly).
// On connecting it asks the broker with ApiVersions, and for every request
// uses the highest version both sides speak. No common version means the
// request is not sent (kUnsupportedVersion); the client never guesses.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "port/status.h"
#include "protocol/errors.h"
#include "protocol/generated/api_versions.h"

namespace eddy::client {

struct VersionRange {
  int16_t min = 0;
  int16_t max = -1;
  bool operator==(const VersionRange&) const = default;
};

// The versions of api_key this client implements; nullopt when it does not
// use that API.
std::optional<VersionRange> client_version_range(int16_t api_key);

// The highest version in both ranges; nullopt when they do not overlap.
std::optional<int16_t> pick_version(VersionRange ours, VersionRange theirs);

// What one broker speaks (from its ApiVersions response).
class ApiVersionTable {
 public:
  void clear() { ranges_.clear(); }
  bool empty() const { return ranges_.empty(); }
  void set(const protocol::ApiVersionsResponse& response);

  std::optional<VersionRange> broker_range(int16_t api_key) const;
  // The version to use for api_key; a kUnsupportedVersion status naming both
  // ranges when there is none.
  Status negotiate(int16_t api_key, int16_t* version) const;

 private:
  struct Entry {
    int16_t api_key;
    VersionRange range;
  };
  std::vector<Entry> ranges_;  // sorted by api_key
};

// The ApiVersions exchange on a new connection, without I/O.
//   ApiVersionsHandshake hs;
//   send ApiVersionsRequest at hs.version(); on the response body:
//   switch (hs.on_response(body, &table, &status)) { kDone, kRetry (send again at hs.version()), kFailed }
// A broker that does not speak the version sent answers with a v0 body and
// UNSUPPORTED_VERSION listing what it speaks (KIP-511); the handshake then
// retries once with the highest ApiVersions version both sides speak. A
// response that does not decode at the version sent is decoded as v0 for the
// same reason (as Kafka's Java client does).
class ApiVersionsHandshake {
 public:
  enum class Step { kDone, kRetry, kFailed };

  ApiVersionsHandshake();
  int16_t version() const { return version_; }
  // A request for version(), with this client's software name and version
  // (sent from v3 on; Kafka validates them against [a-zA-Z0-9.-]).
  protocol::ApiVersionsRequest request(const std::string& software_name, const std::string& software_version) const;
  Step on_response(std::span<const uint8_t> body, ApiVersionTable* table, Status* error);

 private:
  int16_t version_;
  bool retried_ = false;
};

}  // namespace eddy::client
