#include "protocol/errors.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "protocol/generated/describe_client_quotas.h"
#include "protocol/generated/metadata.h"

namespace eddy::protocol {
namespace {

TEST(Errors, TableListsKafka39Codes) {
  std::set<std::string> names;
  int16_t expected = -1;
  for (const ErrorInfo& e : all_errors()) {
    EXPECT_EQ(to_int(e.code), expected++);
    EXPECT_TRUE(names.insert(e.name).second) << "duplicate name " << e.name;
  }
  EXPECT_EQ(all_errors().size(), 129u) << "codes -1..127";
  EXPECT_EQ(find_error(128), nullptr);
  EXPECT_EQ(find_error(-2), nullptr);
}

TEST(Errors, NamesAndCodesMatchKafka) {
  EXPECT_EQ(to_int(ErrorCode::kNone), 0);
  EXPECT_EQ(to_int(ErrorCode::kUnknownServerError), -1);
  EXPECT_EQ(to_int(ErrorCode::kUnknownTopicOrPartition), 3);
  EXPECT_EQ(to_int(ErrorCode::kNotLeaderOrFollower), 6);
  EXPECT_EQ(to_int(ErrorCode::kUnsupportedVersion), 35);
  EXPECT_EQ(to_int(ErrorCode::kTopicAlreadyExists), 36);
  EXPECT_EQ(to_int(ErrorCode::kInvalidRequest), 42);
  EXPECT_EQ(to_int(ErrorCode::kKafkaStorageError), 56);
  EXPECT_EQ(to_int(ErrorCode::kUnknownTopicId), 100);
  EXPECT_EQ(to_int(ErrorCode::kTransactionAbortable), 120);
  EXPECT_EQ(to_int(ErrorCode::kVoterNotFound), 127);
  EXPECT_STREQ(error_name(ErrorCode::kUnknownTopicOrPartition), "UNKNOWN_TOPIC_OR_PARTITION");
  EXPECT_STREQ(error_name(ErrorCode::kNone), "NONE");
  EXPECT_STREQ(error_name(int16_t{58}), "SASL_AUTHENTICATION_FAILED");
  EXPECT_STREQ(error_name(int16_t{500}), "UNKNOWN_ERROR_CODE");
}

TEST(Errors, RetriableFlags) {
  EXPECT_FALSE(is_retriable(ErrorCode::kNone));
  EXPECT_TRUE(is_retriable(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_TRUE(is_retriable(ErrorCode::kNotLeaderOrFollower));
  EXPECT_TRUE(is_retriable(ErrorCode::kRequestTimedOut));
  EXPECT_TRUE(is_retriable(ErrorCode::kCoordinatorLoadInProgress));
  EXPECT_TRUE(is_retriable(ErrorCode::kNotEnoughReplicas));
  EXPECT_TRUE(is_retriable(ErrorCode::kKafkaStorageError));
  EXPECT_FALSE(is_retriable(ErrorCode::kUnknownServerError));
  EXPECT_FALSE(is_retriable(ErrorCode::kMessageTooLarge));
  EXPECT_FALSE(is_retriable(ErrorCode::kUnsupportedVersion));
  EXPECT_FALSE(is_retriable(ErrorCode::kRebalanceInProgress));
  EXPECT_FALSE(is_retriable(ErrorCode::kOutOfOrderSequenceNumber));
  EXPECT_FALSE(is_retriable(static_cast<ErrorCode>(300)));
}

// The generated visitor reaches every error code field of a response,
// nested arrays included, in field order; a null array holds none.
TEST(Errors, ForEachErrorCodeVisitsNestedFields) {
  MetadataResponse m;
  m.topics.resize(2);
  m.topics[0].error_code = to_int(ErrorCode::kUnknownTopicOrPartition);
  m.topics[1].partitions.resize(2);
  m.topics[1].partitions[1].error_code = to_int(ErrorCode::kLeaderNotAvailable);
  std::vector<int16_t> seen;
  m.for_each_error_code([&](int16_t code) { seen.push_back(code); });
  EXPECT_EQ(seen, (std::vector<int16_t>{3, 0, 0, 5}));

  DescribeClientQuotasResponse q;
  q.error_code = to_int(ErrorCode::kInvalidRequest);
  q.entries.reset();
  seen.clear();
  q.for_each_error_code([&](int16_t code) { seen.push_back(code); });
  EXPECT_EQ(seen, (std::vector<int16_t>{42}));
}

}  // namespace
}  // namespace eddy::protocol
