// controller.quorum.voters: what parses, and a clear refusal for the rest.
#include <gtest/gtest.h>

#include "raft/quorum_voters.h"

namespace eddy::raft {
namespace {

TEST(QuorumVoters, ParsesIdsAndAddresses) {
  std::vector<QuorumVoter> v;
  ASSERT_TRUE(parse_quorum_voters(" 1@10.0.0.1:9093, 2@[::1]:9094 ,3@gw-3:9095", &v).ok());
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].id, 1);
  EXPECT_EQ(v[0].address.host, "10.0.0.1");
  EXPECT_EQ(v[0].address.port, 9093);
  EXPECT_EQ(v[1].address.host, "::1");
  EXPECT_EQ(v[2].address.to_string(), "gw-3:9095");
  ASSERT_TRUE(parse_quorum_voters("  ", &v).ok());
  EXPECT_TRUE(v.empty()) << "empty: a single node";
}

TEST(QuorumVoters, RefusesWhatIsNotAVoterList) {
  std::vector<QuorumVoter> v;
  for (const char* bad : {"1", "x@h:1", "-1@h:1", "1@h", "1@h:0", "1@h:99999", "1@h:1,1@h:2", "1@h:1,",
                          "2147483648@h:1", "1@:1x"}) {
    Status s = parse_quorum_voters(bad, &v);
    EXPECT_TRUE(s.is_invalid_argument()) << bad;
    EXPECT_FALSE(s.message().empty()) << bad;
  }
  EXPECT_NE(parse_quorum_voters("1@h:1,1@h:2", &v).message().find("named twice"), std::string::npos);
}

}  // namespace
}  // namespace eddy::raft
