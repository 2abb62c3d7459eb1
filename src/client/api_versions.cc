#include "client/api_versions.h"

#include <algorithm>

#include "protocol/codec.h"
#include "protocol/generated/apis.h"
#include "protocol/headers.h"

namespace eddy::client {

using protocol::ApiKey;

namespace {

struct ClientApi {
  ApiKey key;
  VersionRange range;
};

// Lower bounds: Produce and Fetch from the versions that carry RecordBatch
// v2 (magic 2, which is all Eddy reads and writes). Upper bounds: the newest
// versions whose every field this client handles. Fetch stops at 12 because
// 13+ name topics by id only; Produce at 9 because 10+ only add leader hints
// this client does not use.
constexpr ClientApi kClientApis[] = {
    {ApiKey::kProduce, {3, 9}},
    {ApiKey::kFetch, {4, 12}},
    {ApiKey::kListOffsets, {1, 8}},
    {ApiKey::kMetadata, {1, 12}},
    {ApiKey::kApiVersions, {0, 3}},
    {ApiKey::kSaslHandshake, {1, 1}},
    {ApiKey::kSaslAuthenticate, {0, 2}},
    {ApiKey::kCreateTopics, {1, 7}},
    {ApiKey::kDeleteTopics, {1, 6}},
    {ApiKey::kDeleteRecords, {0, 2}},
    {ApiKey::kDescribeConfigs, {1, 4}},
    {ApiKey::kCreatePartitions, {0, 3}},
    {ApiKey::kIncrementalAlterConfigs, {0, 1}},
    {ApiKey::kDescribeLogDirs, {1, 4}},
    {ApiKey::kDescribeCluster, {0, 1}},
    {ApiKey::kDescribeUserScramCredentials, {0, 0}},
    {ApiKey::kAlterUserScramCredentials, {0, 0}},
    {ApiKey::kInitProducerId, {0, 4}},
    // KRaft's RPCs, for the Raft runtime (raft/kafka_wire.h fills every field
    // of these versions; no broker handler answers them yet).
    {ApiKey::kVote, {0, 1}},
    {ApiKey::kBeginQuorumEpoch, {0, 1}},
    {ApiKey::kEndQuorumEpoch, {0, 1}},
    {ApiKey::kDescribeQuorum, {0, 2}},
};

}  // namespace

std::optional<VersionRange> client_version_range(int16_t api_key) {
  for (const auto& api : kClientApis) {
    if (static_cast<int16_t>(api.key) == api_key) return api.range;
  }
  return std::nullopt;
}

std::optional<int16_t> pick_version(VersionRange ours, VersionRange theirs) {
  int16_t high = std::min(ours.max, theirs.max);
  int16_t low = std::max(ours.min, theirs.min);
  if (high < low) return std::nullopt;
  return high;
}

void ApiVersionTable::set(const protocol::ApiVersionsResponse& response) {
  ranges_.clear();
  for (const auto& v : response.api_keys) {
    ranges_.push_back({v.api_key, {v.min_version, v.max_version}});
  }
  std::sort(ranges_.begin(), ranges_.end(), [](const Entry& a, const Entry& b) { return a.api_key < b.api_key; });
}

std::optional<VersionRange> ApiVersionTable::broker_range(int16_t api_key) const {
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), api_key,
                             [](const Entry& e, int16_t key) { return e.api_key < key; });
  if (it == ranges_.end() || it->api_key != api_key) return std::nullopt;
  return it->range;
}

Status ApiVersionTable::negotiate(int16_t api_key, int16_t* version) const {
  std::optional<VersionRange> ours = client_version_range(api_key);
  const char* name = protocol::api_name(api_key);
  if (!ours) {
    return Status::error(Status::Code::kUnsupportedVersion, std::string("this client does not implement ") + name);
  }
  std::optional<VersionRange> theirs = broker_range(api_key);
  if (!theirs) {
    return Status::error(Status::Code::kUnsupportedVersion, std::string("the broker does not support ") + name);
  }
  std::optional<int16_t> v = pick_version(*ours, *theirs);
  if (!v) {
    return Status::error(Status::Code::kUnsupportedVersion,
                         std::string(name) + ": the broker speaks versions " + std::to_string(theirs->min) + "-" +
                             std::to_string(theirs->max) + ", this client " + std::to_string(ours->min) + "-" +
                             std::to_string(ours->max));
  }
  *version = *v;
  return Status();
}

ApiVersionsHandshake::ApiVersionsHandshake()
    : version_(client_version_range(static_cast<int16_t>(ApiKey::kApiVersions))->max) {}

protocol::ApiVersionsRequest ApiVersionsHandshake::request(const std::string& software_name,
                                                           const std::string& software_version) const {
  protocol::ApiVersionsRequest r;
  if (version_ >= 3) {
    r.client_software_name = software_name;
    r.client_software_version = software_version;
  }
  return r;
}

ApiVersionsHandshake::Step ApiVersionsHandshake::on_response(std::span<const uint8_t> body, ApiVersionTable* table,
                                                             Status* error) {
  protocol::ApiVersionsResponse response;
  Status s = protocol::decode(body, version_, &response);
  if (!s.ok() && version_ != 0) {
    Status v0 = protocol::decode(body, 0, &response);
    if (v0.ok()) s = v0;
  }
  if (!s.ok()) {
    *error = Status::error(Status::Code::kProtocol, "ApiVersions response: " + s.message());
    return Step::kFailed;
  }
  if (response.error_code == protocol::to_int(protocol::ErrorCode::kUnsupportedVersion) && !retried_) {
    const int16_t key = static_cast<int16_t>(ApiKey::kApiVersions);
    for (const auto& v : response.api_keys) {
      if (v.api_key != key) continue;
      std::optional<int16_t> pick = pick_version(*client_version_range(key), {v.min_version, v.max_version});
      if (pick && *pick != version_) {
        version_ = *pick;
        retried_ = true;
        return Step::kRetry;
      }
    }
  }
  if (response.error_code != 0) {
    *error = protocol::broker_error(response.error_code, "ApiVersions v" + std::to_string(version_));
    return Step::kFailed;
  }
  table->set(response);
  return Step::kDone;
}

}  // namespace eddy::client
