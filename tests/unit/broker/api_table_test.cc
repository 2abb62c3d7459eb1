// The broker's API table against the codec's: generating a codec for an API
// (the KRaft RPCs for the Raft runtime) must not make the broker advertise
// or dispatch it, and everything it advertises has a codec at those versions.
#include <gtest/gtest.h>

#include "broker/broker.h"
#include "protocol/headers.h"

namespace eddy::broker {
namespace {

using protocol::ApiKey;

TEST(BrokerApiTableTest, KRaftApisHaveCodecsButAreNotAdvertised) {
  for (ApiKey key : {ApiKey::kVote, ApiKey::kBeginQuorumEpoch, ApiKey::kEndQuorumEpoch, ApiKey::kDescribeQuorum}) {
    const int16_t k = static_cast<int16_t>(key);
    EXPECT_NE(protocol::find_api(k), nullptr) << k;
    EXPECT_EQ(Broker::find_api(k), nullptr) << "advertised without a handler: " << k;
    for (const ApiSupport& api : Broker::supported_apis()) EXPECT_NE(api.key, key);
  }
}

TEST(BrokerApiTableTest, EveryAdvertisedVersionHasACodec) {
  for (const ApiSupport& api : Broker::supported_apis()) {
    const protocol::ApiInfo* codec = protocol::find_api(static_cast<int16_t>(api.key));
    ASSERT_NE(codec, nullptr) << static_cast<int>(api.key);
    EXPECT_GE(api.min_version, codec->min_version) << codec->name;
    EXPECT_LE(api.max_version, codec->max_version) << codec->name;
    EXPECT_NE(api.handle, nullptr) << codec->name;
  }
}

}  // namespace
}  // namespace eddy::broker
