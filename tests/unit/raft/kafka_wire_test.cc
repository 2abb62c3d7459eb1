// raft/kafka_wire: every core message through real Kafka bytes (the
// generated codec at the chosen version) and back, and the decoders'
// refusals: wrong cluster or partition, Kafka errors, damaged records.
#include "raft/kafka_wire.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <string>
#include <vector>

#include "protocol/codec.h"
#include "protocol/control_batch.h"
#include "protocol/generated/leader_change_message.h"
#include "protocol/record_batch.h"
#include "raft/kafka_describe_quorum.h"

namespace eddy::raft {
namespace {

using protocol::ErrorCode;

GroupAddress group() {
  GroupAddress address;
  address.cluster_id = "MkU3OEVBNTcwNTJENDM2Qk";
  return address;
}

ErrorCode kafka_code(const Status& s) { return protocol::kafka_error(s); }

// Encodes m at version and decodes the bytes again. The bytes stay alive in
// the fixture (decoded Records view them).
class KafkaWireTest : public ::testing::Test {
 protected:
  template <typename M>
  M through_bytes(const M& m, int16_t version) {
    protocol::OutputBuffer out;
    Status s = protocol::encode(m, version, &out);
    EXPECT_TRUE(s.ok()) << s.to_string();
    frames_.emplace_back(out.memory(), out.memory() + out.memory_size());
    M decoded;
    s = protocol::decode(std::span<const uint8_t>(frames_.back()), version, &decoded);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return decoded;
  }

  // A FetchResponse through the wire; the records bytes stay alive.
  protocol::FetchResponse fetch_response_bytes(const FetchResponse& response, int16_t version = kFetchVersion) {
    storage_.emplace_back();
    protocol::FetchResponse kafka;
    Status s = to_kafka(response, group(), EntryEncoding{{1, 2, 3}, 1700000000000}, &storage_.back(), &kafka);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return through_bytes(kafka, version);
  }

  std::deque<std::vector<uint8_t>> frames_;
  std::deque<std::vector<uint8_t>> storage_;
};

// --- Vote, BeginQuorumEpoch, EndQuorumEpoch ------------------------------------

TEST_F(KafkaWireTest, VoteRequestRoundTripsAtEveryVersion) {
  const VoteRequest request{7, 2, 6, 41};
  for (int16_t version : {int16_t{0}, kVoteVersion}) {
    protocol::VoteRequest kafka = through_bytes(to_kafka(request, group(), 3), version);
    EXPECT_EQ(kafka.voter_id, version >= 1 ? 3 : -1);
    VoteRequest back;
    Status s = from_kafka(kafka, group(), 3, &back);
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(back.candidate_epoch, 7);
    EXPECT_EQ(back.candidate_id, 2);
    EXPECT_EQ(back.last_offset_epoch, 6);
    EXPECT_EQ(back.last_offset, 41);
  }
}

TEST_F(KafkaWireTest, VoteResponseRoundTrips) {
  for (bool granted : {true, false}) {
    protocol::VoteResponse kafka = through_bytes(to_kafka(VoteResponse{7, kNoNode, granted}, group()), kVoteVersion);
    EXPECT_EQ(kafka.error_code, 0);
    VoteResponse back;
    ASSERT_TRUE(from_kafka(kafka, group(), &back).ok());
    EXPECT_EQ(back.leader_epoch, 7);
    EXPECT_EQ(back.leader_id, kNoNode);
    EXPECT_EQ(back.vote_granted, granted);
  }
}

TEST_F(KafkaWireTest, AKafkaVotersFencedAnswerCarriesItsEpoch) {
  protocol::VoteResponse kafka = to_kafka(VoteResponse{9, 1, true}, group());
  kafka.topics[0].partitions[0].error_code = protocol::to_int(ErrorCode::kFencedLeaderEpoch);
  VoteResponse back;
  ASSERT_TRUE(from_kafka(through_bytes(kafka, kVoteVersion), group(), &back).ok());
  EXPECT_EQ(back.leader_epoch, 9);
  EXPECT_EQ(back.leader_id, 1);
  EXPECT_FALSE(back.vote_granted) << "an error never grants";
  kafka.topics[0].partitions[0].error_code = protocol::to_int(ErrorCode::kInconsistentVoterSet);
  Status s = from_kafka(kafka, group(), &back);
  EXPECT_EQ(kafka_code(s), ErrorCode::kInconsistentVoterSet) << s.to_string();
}

TEST_F(KafkaWireTest, BeginQuorumEpochRoundTripsAtEveryVersion) {
  for (int16_t version : {int16_t{0}, kBeginQuorumEpochVersion}) {
    BeginQuorumEpochRequest request;
    Status s = from_kafka(through_bytes(to_kafka(BeginQuorumEpochRequest{5, 1}, group(), 2), version), group(), 2,
                          &request);
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(request.leader_epoch, 5);
    EXPECT_EQ(request.leader_id, 1);
    BeginQuorumEpochResponse response;
    s = from_kafka(through_bytes(to_kafka(BeginQuorumEpochResponse{5, 1}, group()), version), group(), &response);
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(response.leader_epoch, 5);
    EXPECT_EQ(response.leader_id, 1);
  }
}

TEST_F(KafkaWireTest, EndQuorumEpochKeepsTheSuccessorsAtEveryVersion) {
  for (int16_t version : {int16_t{0}, kEndQuorumEpochVersion}) {
    protocol::EndQuorumEpochRequest kafka =
        through_bytes(to_kafka(EndQuorumEpochRequest{4, 3, {2, 1}}, group()), version);
    EXPECT_EQ(kafka.topics[0].partitions[0].preferred_candidates.size(), version >= 1 ? 2u : 0u);
    EndQuorumEpochRequest request;
    ASSERT_TRUE(from_kafka(kafka, group(), &request).ok());
    EXPECT_EQ(request.leader_epoch, 4);
    EXPECT_EQ(request.leader_id, 3);
    EXPECT_EQ(request.preferred_successors, (std::vector<NodeId>{2, 1}));
    EndQuorumEpochAck ack;
    ASSERT_TRUE(from_kafka(through_bytes(to_kafka(EndQuorumEpochAck{5, kNoNode}, group()), version), group(), &ack)
                    .ok());
    EXPECT_EQ(ack, (EndQuorumEpochAck{5, kNoNode}));
  }
}

TEST_F(KafkaWireTest, RequestsForAnotherClusterOrPartitionAreRefusedWithKafkasCodes) {
  protocol::VoteRequest vote = to_kafka(VoteRequest{7, 2, 6, 41}, group(), 3);
  VoteRequest out;
  protocol::VoteRequest other_cluster = vote;
  other_cluster.cluster_id = "another";
  Status s = from_kafka(other_cluster, group(), 3, &out);
  EXPECT_EQ(kafka_code(s), ErrorCode::kInconsistentClusterId) << s.to_string();
  EXPECT_NE(s.message().find("another"), std::string::npos) << s.message();
  EXPECT_EQ(refusal_response<protocol::VoteResponse>(s).error_code,
            protocol::to_int(ErrorCode::kInconsistentClusterId));

  protocol::VoteRequest no_cluster = vote;
  no_cluster.cluster_id.reset();
  EXPECT_TRUE(from_kafka(no_cluster, group(), 3, &out).ok()) << "a null ClusterId is not enforced (as Kafka)";

  protocol::VoteRequest other_topic = vote;
  other_topic.topics[0].topic_name = "orders";
  EXPECT_EQ(kafka_code(from_kafka(other_topic, group(), 3, &out)), ErrorCode::kInvalidRequest);
  protocol::VoteRequest other_partition = vote;
  other_partition.topics[0].partitions[0].partition_index = 1;
  EXPECT_EQ(kafka_code(from_kafka(other_partition, group(), 3, &out)), ErrorCode::kInvalidRequest);
  protocol::VoteRequest two_partitions = vote;
  two_partitions.topics[0].partitions.push_back(two_partitions.topics[0].partitions[0]);
  EXPECT_EQ(kafka_code(from_kafka(two_partitions, group(), 3, &out)), ErrorCode::kInvalidRequest);
  protocol::VoteRequest no_topics = vote;
  no_topics.topics.clear();
  EXPECT_EQ(kafka_code(from_kafka(no_topics, group(), 3, &out)), ErrorCode::kInvalidRequest);

  EXPECT_EQ(kafka_code(from_kafka(vote, group(), 4, &out)), ErrorCode::kInvalidVoterKey) << "addressed to 3";

  BeginQuorumEpochRequest begin;
  protocol::BeginQuorumEpochRequest kafka_begin = to_kafka(BeginQuorumEpochRequest{5, 1}, group(), 2);
  kafka_begin.cluster_id = "another";
  EXPECT_EQ(kafka_code(from_kafka(kafka_begin, group(), 2, &begin)), ErrorCode::kInconsistentClusterId);
  EndQuorumEpochRequest end;
  protocol::EndQuorumEpochRequest kafka_end = to_kafka(EndQuorumEpochRequest{4, 3, {}}, group());
  kafka_end.topics[0].topic_name = "orders";
  EXPECT_EQ(kafka_code(from_kafka(kafka_end, group(), &end)), ErrorCode::kInvalidRequest);
}

TEST_F(KafkaWireTest, ResponsesWithErrorsOrForAnotherPartitionAreNotUsed) {
  BeginQuorumEpochResponse out;
  protocol::BeginQuorumEpochResponse top_level = to_kafka(BeginQuorumEpochResponse{5, 1}, group());
  top_level.error_code = protocol::to_int(ErrorCode::kInconsistentClusterId);
  Status s = from_kafka(through_bytes(top_level, kBeginQuorumEpochVersion), group(), &out);
  EXPECT_EQ(kafka_code(s), ErrorCode::kInconsistentClusterId) << s.to_string();
  protocol::BeginQuorumEpochResponse other = to_kafka(BeginQuorumEpochResponse{5, 1}, group());
  other.topics[0].topic_name = "orders";
  EXPECT_FALSE(from_kafka(other, group(), &out).ok());
  EndQuorumEpochAck ack;
  EXPECT_FALSE(from_kafka(protocol::EndQuorumEpochResponse{}, group(), &ack).ok()) << "no partition at all";
}

// --- Fetch -------------------------------------------------------------------

TEST_F(KafkaWireTest, FetchRequestRoundTripsAtTheVersionsKRaftUses) {
  for (bool recovering : {false, true}) {
    const FetchRequest request{6, 2, 40, 5, recovering};
    for (int16_t version : {kMinFetchVersion, int16_t{13}, int16_t{15}, kFetchVersion}) {
      protocol::FetchRequest kafka = through_bytes(to_kafka(request, group(), FetchLimits{250, 1 << 20}, version),
                                                   version);
      EXPECT_EQ(kafka.max_wait_ms, 250);
      EXPECT_EQ(kafka.topics[0].partitions[0].partition_max_bytes, 1 << 20);
      EXPECT_EQ(kafka.topics[0].topic_id.is_zero(), version < 13) << "by id from v13";
      FetchRequest back;
      Status s = from_kafka(kafka, group(), &back);
      ASSERT_TRUE(s.ok()) << version << ": " << s.to_string();
      EXPECT_EQ(back.current_leader_epoch, 6);
      EXPECT_EQ(back.replica_id, 2) << version;
      EXPECT_EQ(back.fetch_offset, 40);
      EXPECT_EQ(back.last_fetched_epoch, 5);
      EXPECT_EQ(back.recovering, recovering) << version;
    }
  }
}

TEST_F(KafkaWireTest, TheRecoveringFlagIsAnUnknownTagThatKafkaKeepsAndIgnores) {
  protocol::FetchRequest kafka = through_bytes(to_kafka(FetchRequest{6, 2, 0, 0, true}, group(), {}), kFetchVersion);
  ASSERT_EQ(kafka.unknown_tagged_fields.size(), 1u);
  EXPECT_EQ(kafka.unknown_tagged_fields[0].tag, kRecoveringTag);
  EXPECT_EQ(kafka.unknown_tagged_fields[0].data, std::vector<uint8_t>{1});
  FetchRequest back;
  kafka.unknown_tagged_fields[0].data = {7};
  EXPECT_EQ(kafka_code(from_kafka(kafka, group(), &back)), ErrorCode::kInvalidRequest);
  kafka.unknown_tagged_fields.clear();  // a Kafka follower's fetch
  ASSERT_TRUE(from_kafka(kafka, group(), &back).ok());
  EXPECT_FALSE(back.recovering);
}

TEST_F(KafkaWireTest, FetchRequestsKafkaRefusesAreRefused) {
  FetchRequest out;
  protocol::FetchRequest other_cluster = to_kafka(FetchRequest{6, 2, 40, 5, false}, group(), {});
  other_cluster.cluster_id = "another";
  EXPECT_EQ(kafka_code(from_kafka(other_cluster, group(), &out)), ErrorCode::kInconsistentClusterId);
  protocol::FetchRequest other_topic_id = to_kafka(FetchRequest{6, 2, 40, 5, false}, group(), {});
  other_topic_id.topics[0].topic_id.bytes[0] = 9;
  EXPECT_EQ(kafka_code(from_kafka(other_topic_id, group(), &out)), ErrorCode::kInvalidRequest);
  protocol::FetchRequest other_name_v12 =
      through_bytes(to_kafka(FetchRequest{6, 2, 40, 5, false}, group(), {}, 12), 12);
  other_name_v12.topics[0].topic = "orders";
  EXPECT_EQ(kafka_code(from_kafka(other_name_v12, group(), &out)), ErrorCode::kInvalidRequest);
  const FetchRequest bad[] = {{6, 2, -1, 5, false}, {6, 2, 40, -1, false}, {4, 2, 40, 5, false}};
  for (const FetchRequest& request : bad) {
    EXPECT_EQ(kafka_code(from_kafka(to_kafka(request, group(), {}), group(), &out)), ErrorCode::kInvalidRequest);
  }
  EXPECT_EQ(refusal_response<protocol::FetchResponse>(from_kafka(other_cluster, group(), &out)).error_code,
            protocol::to_int(ErrorCode::kInconsistentClusterId));
}

FetchResponse sample_fetch_response() {
  FetchResponse response;
  response.leader_epoch = 4;
  response.leader_id = 1;
  response.high_watermark = 11;
  response.base_offset = 10;
  // The leader-change entry as a leader reads it from its log: the message it wrote.
  const std::vector<uint8_t> message = leader_change_message(1, {1, 2, 3});
  response.entries = {Entry{3, EntryKind::kData, "a"},
                      Entry{4, EntryKind::kLeaderChange, std::string(message.begin(), message.end())},
                      Entry{4, EntryKind::kData, std::string("\0binary\xff", 8)}, Entry{4, EntryKind::kData, ""}};
  return response;
}

void expect_equal(const FetchResponse& a, const FetchResponse& b) {
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.leader_epoch, b.leader_epoch);
  EXPECT_EQ(a.leader_id, b.leader_id);
  EXPECT_EQ(a.high_watermark, b.high_watermark);
  EXPECT_EQ(a.diverging, b.diverging);
  EXPECT_EQ(a.diverging_epoch, b.diverging_epoch);
  EXPECT_EQ(a.snapshot_id, b.snapshot_id);
  EXPECT_EQ(a.base_offset, b.base_offset);
  EXPECT_EQ(a.entries, b.entries);
}

TEST_F(KafkaWireTest, FetchResponseWithEntriesAndALeaderChangeRoundTrips) {
  const FetchResponse response = sample_fetch_response();
  for (int16_t version : {kMinFetchVersion, kFetchVersion}) {
    FetchResponse back;
    Status s = from_kafka(fetch_response_bytes(response, version), group(), 10, &back);
    ASSERT_TRUE(s.ok()) << s.to_string();
    expect_equal(back, response);
  }
}

TEST_F(KafkaWireTest, EntriesAreKafkaRecordBatchesAndTheLeaderChangeIsKafkasControlRecord) {
  protocol::FetchResponse kafka = fetch_response_bytes(sample_fetch_response());
  protocol::BatchIterator batches(kafka.responses[0].partitions[0].records->bytes);
  protocol::RecordBatchView batch;
  std::vector<protocol::RecordBatchView> seen;
  while (batches.next(&batch)) seen.push_back(batch);
  ASSERT_EQ(batches.error(), protocol::BatchError::kOk);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].base_offset(), 10);
  EXPECT_EQ(seen[0].partition_leader_epoch(), 3);
  EXPECT_FALSE(seen[0].is_control());
  EXPECT_EQ(seen[0].max_timestamp(), 1700000000000);
  const protocol::RecordBatchView& control = seen[1];
  EXPECT_EQ(control.base_offset(), 11);
  EXPECT_TRUE(control.is_control());
  EXPECT_FALSE(control.is_transactional());
  EXPECT_EQ(control.producer_id(), -1);
  EXPECT_FALSE(protocol::control_type(control).has_value()) << "not a transaction marker";
  protocol::RecordIterator records(control);
  protocol::Record record;
  ASSERT_TRUE(records.next(&record));
  ASSERT_TRUE(record.key && record.value);
  EXPECT_EQ(std::vector<uint8_t>(record.key->begin(), record.key->end()), (std::vector<uint8_t>{0, 0, 0, 2}));
  protocol::LeaderChangeMessage message;
  ASSERT_TRUE(protocol::decode(*record.value, 0, &message).ok());
  EXPECT_EQ(message.version_, 0);
  EXPECT_EQ(message.leader_id, 1) << "the answering leader's own epoch";
  ASSERT_EQ(message.voters.size(), 3u);
  EXPECT_EQ(message.voters[2].voter_id, 3);
}

TEST_F(KafkaWireTest, ALeaderChangeOfAnOlderEpochNamesNoLeader) {
  std::vector<uint8_t> bytes;
  const Entry entry{2, EntryKind::kLeaderChange, ""};
  ASSERT_TRUE(encode_entries(0, std::span<const Entry>(&entry, 1), 4, 1, {}, &bytes).ok());
  protocol::RecordBatchView batch;
  ASSERT_EQ(protocol::RecordBatchView::parse(bytes, &batch), protocol::BatchError::kOk);
  protocol::RecordIterator records(batch);
  protocol::Record record;
  ASSERT_TRUE(records.next(&record));
  protocol::LeaderChangeMessage message;
  ASSERT_TRUE(protocol::decode(*record.value, 0, &message).ok());
  EXPECT_EQ(message.leader_id, -1);
  const Entry with_payload{4, EntryKind::kLeaderChange, "x"};
  EXPECT_TRUE(encode_entries(0, std::span<const Entry>(&with_payload, 1), 4, 1, {}, &bytes).is_corruption())
      << "a leader-change payload must be a LeaderChangeMessage";
}

TEST_F(KafkaWireTest, ALeaderChangeMessageReadFromALogIsSentAsItIsAndStoredAsFetched) {
  const std::vector<uint8_t> written = leader_change_message(2, {1, 2, 3});
  const Entry entry{4, EntryKind::kLeaderChange, std::string(written.begin(), written.end())};
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(encode_entries(7, std::span<const Entry>(&entry, 1), 5, 1, {}, &bytes).ok());
  std::vector<Entry> back;
  ASSERT_TRUE(decode_entries(bytes, 7, &back).ok());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0], entry) << "leader 2's message, not rebuilt for the answering leader 1";
}

TEST_F(KafkaWireTest, FetchResponseWithoutEntriesStartsAtTheExpectedBase) {
  FetchResponse response;
  response.leader_epoch = 4;
  response.leader_id = 1;
  response.high_watermark = 0;
  response.base_offset = 17;
  FetchResponse back;
  ASSERT_TRUE(from_kafka(fetch_response_bytes(response), group(), 17, &back).ok());
  expect_equal(back, response);
}

TEST_F(KafkaWireTest, DivergingEpochRoundTripsIncludingEpochZero) {
  for (EpochEndOffset diverging : {EpochEndOffset{3, 12}, EpochEndOffset{0, 0}}) {
    FetchResponse response;
    response.leader_epoch = 5;
    response.leader_id = 2;
    response.high_watermark = 9;
    response.diverging = true;
    response.diverging_epoch = diverging;
    response.base_offset = 20;
    protocol::FetchResponse kafka = fetch_response_bytes(response);
    EXPECT_EQ(kafka.responses[0].partitions[0].diverging_epoch.epoch, diverging.epoch);
    FetchResponse back;
    ASSERT_TRUE(from_kafka(kafka, group(), 20, &back).ok());
    expect_equal(back, response);
  }
}

TEST_F(KafkaWireTest, FetchErrorsMapToKafkasCodes) {
  const std::pair<FetchError, ErrorCode> cases[] = {{FetchError::kFencedLeaderEpoch, ErrorCode::kFencedLeaderEpoch},
                                                    {FetchError::kNotLeader, ErrorCode::kNotLeaderOrFollower}};
  for (const auto& [error, code] : cases) {
    FetchResponse response;
    response.error = error;
    response.leader_epoch = 8;
    response.leader_id = kNoNode;
    response.high_watermark = 3;
    protocol::FetchResponse kafka = fetch_response_bytes(response);
    EXPECT_EQ(kafka.responses[0].partitions[0].error_code, protocol::to_int(code));
    FetchResponse back;
    ASSERT_TRUE(from_kafka(kafka, group(), 0, &back).ok());
    expect_equal(back, response);
  }
}

TEST_F(KafkaWireTest, ASnapshotIdRoundTripsAndNoneIsKafkasMinusOne) {
  FetchResponse response;
  response.leader_epoch = 6;
  response.leader_id = 3;
  response.high_watermark = 120;
  response.base_offset = 4;
  protocol::FetchResponse kafka = fetch_response_bytes(response);
  EXPECT_EQ(kafka.responses[0].partitions[0].snapshot_id.end_offset, -1);
  EXPECT_EQ(kafka.responses[0].partitions[0].snapshot_id.epoch, -1);
  response.snapshot_id = {100, 5};
  kafka = fetch_response_bytes(response);
  EXPECT_EQ(kafka.responses[0].partitions[0].snapshot_id.end_offset, 100);
  FetchResponse back;
  ASSERT_TRUE(from_kafka(kafka, group(), 4, &back).ok());
  expect_equal(back, response);
}

TEST_F(KafkaWireTest, FetchSnapshotRoundTripsAtEveryVersion) {
  FetchSnapshotRequest request{7, 2, SnapshotId{300, 6}, 4096};
  for (int16_t version = 0; version <= kFetchSnapshotVersion; ++version) {
    FetchSnapshotRequest back;
    ASSERT_TRUE(from_kafka(through_bytes(to_kafka(request, group(), 65536), version), group(), &back).ok());
    EXPECT_EQ(back.current_leader_epoch, 7);
    EXPECT_EQ(back.replica_id, 2);
    EXPECT_EQ(back.snapshot_id, (SnapshotId{300, 6}));
    EXPECT_EQ(back.position, 4096);
    EXPECT_EQ(back.max_bytes, 65536);
  }
  FetchSnapshotResponse response;
  response.leader_epoch = 7;
  response.leader_id = 1;
  response.snapshot_id = {300, 6};
  response.size = 10000;
  response.position = 4096;
  response.bytes = std::string(1000, 'q') + std::string(1, '\0') + "end";
  for (const auto& [error, code] : {std::pair{FetchError::kNone, ErrorCode::kNone},
                                    {FetchError::kSnapshotNotFound, ErrorCode::kSnapshotNotFound},
                                    {FetchError::kPositionOutOfRange, ErrorCode::kPositionOutOfRange},
                                    {FetchError::kFencedLeaderEpoch, ErrorCode::kFencedLeaderEpoch},
                                    {FetchError::kNotLeader, ErrorCode::kNotLeaderOrFollower}}) {
    response.error = error;
    for (int16_t version = 0; version <= kFetchSnapshotVersion; ++version) {
      protocol::FetchSnapshotResponse kafka = through_bytes(to_kafka(response, group()), version);
      EXPECT_EQ(kafka.topics[0].partitions[0].error_code, protocol::to_int(code));
      FetchSnapshotResponse back;
      ASSERT_TRUE(from_kafka(kafka, group(), &back).ok());
      EXPECT_EQ(back.error, error);
      EXPECT_EQ(back.leader_epoch, 7);
      EXPECT_EQ(back.leader_id, 1);
      EXPECT_EQ(back.snapshot_id, response.snapshot_id);
      EXPECT_EQ(back.size, 10000);
      EXPECT_EQ(back.position, 4096);
      EXPECT_EQ(back.bytes, response.bytes);
    }
  }
}

TEST_F(KafkaWireTest, FetchSnapshotsKafkaRefusesAreRefused) {
  FetchSnapshotRequest out;
  const protocol::FetchSnapshotRequest good = to_kafka(FetchSnapshotRequest{7, 2, SnapshotId{300, 6}, 0}, group(), 100);
  protocol::FetchSnapshotRequest other_cluster = good;
  other_cluster.cluster_id = "another";
  EXPECT_EQ(kafka_code(from_kafka(other_cluster, group(), &out)), ErrorCode::kInconsistentClusterId);
  protocol::FetchSnapshotRequest other_partition = good;
  other_partition.topics[0].partitions[0].partition = 3;
  EXPECT_EQ(kafka_code(from_kafka(other_partition, group(), &out)), ErrorCode::kInvalidRequest);
  protocol::FetchSnapshotRequest negative = good;
  negative.topics[0].partitions[0].position = -1;
  EXPECT_EQ(kafka_code(from_kafka(negative, group(), &out)), ErrorCode::kInvalidRequest);
  protocol::FetchSnapshotRequest two = good;
  two.topics.push_back(two.topics[0]);
  EXPECT_EQ(kafka_code(from_kafka(two, group(), &out)), ErrorCode::kInvalidRequest);
  FetchSnapshotResponse answer;
  answer.leader_epoch = 7;
  answer.size = -3;
  FetchSnapshotResponse back;
  EXPECT_FALSE(from_kafka(to_kafka(answer, group()), group(), &back).ok());
  protocol::FetchSnapshotResponse unknown = to_kafka(FetchSnapshotResponse{}, group());
  unknown.topics[0].partitions[0].error_code = protocol::to_int(ErrorCode::kUnknownLeaderEpoch);
  EXPECT_EQ(kafka_code(from_kafka(unknown, group(), &back)), ErrorCode::kUnknownLeaderEpoch);
}

TEST_F(KafkaWireTest, FetchAnswersTheCoreCannotUseAreErrors) {
  FetchResponse out;
  protocol::FetchResponse kafka = fetch_response_bytes(sample_fetch_response());
  protocol::FetchResponse unknown_epoch = kafka;
  unknown_epoch.responses[0].partitions[0].error_code = protocol::to_int(ErrorCode::kUnknownLeaderEpoch);
  EXPECT_EQ(kafka_code(from_kafka(unknown_epoch, group(), 10, &out)), ErrorCode::kUnknownLeaderEpoch);
  protocol::FetchResponse top_level = kafka;
  top_level.error_code = protocol::to_int(ErrorCode::kInconsistentClusterId);
  EXPECT_EQ(kafka_code(from_kafka(top_level, group(), 10, &out)), ErrorCode::kInconsistentClusterId);
  for (auto [end, epoch] : {std::pair<int64_t, int32_t>{0, 3}, {100, 0}, {-5, 2}}) {
    protocol::FetchResponse snapshot = kafka;
    snapshot.responses[0].partitions[0].snapshot_id = {end, epoch, {}};
    EXPECT_FALSE(from_kafka(snapshot, group(), 10, &out).ok()) << end << "-" << epoch;
  }
  protocol::FetchResponse other_topic = kafka;
  other_topic.responses[0].topic_id.bytes[3] = 1;
  EXPECT_FALSE(from_kafka(other_topic, group(), 10, &out).ok());
  protocol::FetchResponse unknown_hw = kafka;
  unknown_hw.responses[0].partitions[0].high_watermark = -1;
  ASSERT_TRUE(from_kafka(unknown_hw, group(), 10, &out).ok());
  EXPECT_EQ(out.high_watermark, 0);
}

// --- Damaged records -------------------------------------------------------------

class DamagedRecordsTest : public KafkaWireTest {
 protected:
  Status decode_records(std::vector<uint8_t> bytes, Offset expected_base = 0) {
    storage_.push_back(std::move(bytes));
    FetchResponse response;
    response.leader_epoch = 4;
    protocol::FetchResponse kafka;
    EXPECT_TRUE(to_kafka(response, group(), {}, &scratch_, &kafka).ok());
    kafka.responses[0].partitions[0].records = protocol::Records{storage_.back(), {}};
    FetchResponse out;
    Status s = from_kafka(through_bytes(kafka, kFetchVersion), group(), expected_base, &out);
    if (!s.ok()) {
      EXPECT_TRUE(out.entries.empty());
    }
    return s;
  }

  static std::vector<uint8_t> entries_at(Offset base, std::vector<Entry> entries) {
    std::vector<uint8_t> bytes;
    EXPECT_TRUE(encode_entries(base, entries, 4, 1, {}, &bytes).ok());
    return bytes;
  }

  std::vector<uint8_t> scratch_;
};

void expect_error(const Status& s, const char* says) {
  EXPECT_TRUE(s.is_corruption()) << s.to_string();
  EXPECT_NE(s.message().find(says), std::string::npos) << s.message();
}

TEST_F(DamagedRecordsTest, GoodRecordsDecode) {
  EXPECT_TRUE(decode_records(entries_at(5, {{4, EntryKind::kData, "x"}}), 5).ok());
}

TEST_F(DamagedRecordsTest, ABadCrcIsAnError) {
  std::vector<uint8_t> bytes = entries_at(0, {{4, EntryKind::kData, "x"}, {4, EntryKind::kData, "y"}});
  bytes.back() ^= 0x01;
  expect_error(decode_records(bytes), "CRC");
}

TEST_F(DamagedRecordsTest, AGapInOffsetsIsAnError) {
  std::vector<uint8_t> bytes = entries_at(0, {{4, EntryKind::kData, "x"}});
  std::vector<uint8_t> later = entries_at(2, {{4, EntryKind::kData, "y"}});
  bytes.insert(bytes.end(), later.begin(), later.end());
  expect_error(decode_records(bytes), "expected offset 1");
  expect_error(decode_records(entries_at(3, {{4, EntryKind::kData, "x"}}), 2), "expected offset 2");
}

TEST_F(DamagedRecordsTest, TwoRecordsInABatchAreAnError) {
  protocol::RecordBatchBuilder builder;
  builder.partition_leader_epoch(4).add("", "x", 0).add("", "y", 0);
  expect_error(decode_records(builder.build()), "2 records");
}

TEST_F(DamagedRecordsTest, TruncatedRecordsAreAnError) {
  std::vector<uint8_t> bytes = entries_at(0, {{4, EntryKind::kData, "x"}, {4, EntryKind::kLeaderChange, ""}});
  for (size_t cut : {size_t{1}, size_t{30}, bytes.size() / 2 + 1}) {
    std::vector<uint8_t> truncated(bytes.begin(), bytes.end() - static_cast<std::ptrdiff_t>(cut));
    expect_error(decode_records(truncated), "truncated");
  }
}

TEST_F(DamagedRecordsTest, BatchesThatAreNoRaftEntryAreErrors) {
  expect_error(decode_records(protocol::build_control_batch(protocol::ControlType::kCommit, 7, 0, 1, 0)),
               "transactional");
  protocol::RecordBatchBuilder marker_type;  // a control record of another type, not transactional
  const uint8_t commit_key[4] = {0, 0, 0, 1};
  protocol::RecordInput commit;
  commit.key = std::span<const uint8_t>(commit_key);
  commit.value = std::span<const uint8_t>(commit_key);
  marker_type.partition_leader_epoch(4).attributes(protocol::batch_attributes::kControl).add(commit);
  expect_error(decode_records(marker_type.build()), "type 1");
  protocol::RecordBatchBuilder epochless;  // partitionLeaderEpoch -1
  epochless.add("", "x", 0);
  expect_error(decode_records(epochless.build()), "partition leader epoch -1");
  protocol::RecordBatchBuilder tombstone;
  protocol::RecordInput null_value;
  tombstone.partition_leader_epoch(4).add(null_value);
  expect_error(decode_records(tombstone.build()), "null value");
  protocol::RecordBatchBuilder bad_message;  // a LeaderChange whose value is not a LeaderChangeMessage
  const uint8_t key[4] = {0, 0, 0, 2};
  const uint8_t value[3] = {0, 0, 0};
  protocol::RecordInput record;
  record.key = std::span<const uint8_t>(key);
  record.value = std::span<const uint8_t>(value);
  bad_message.partition_leader_epoch(4).attributes(protocol::batch_attributes::kControl).add(record);
  expect_error(decode_records(bad_message.build()), "LeaderChangeMessage");
}

// Recomputes the CRC of every batch that still parses, so that mutations
// reach the checks behind the CRC.
void fix_crcs(std::vector<uint8_t>* bytes) {
  size_t position = 0;
  while (position < bytes->size()) {
    std::span<uint8_t> rest(bytes->data() + position, bytes->size() - position);
    protocol::RecordBatchView batch;
    if (protocol::RecordBatchView::parse(rest, &batch) != protocol::BatchError::kOk) return;
    protocol::update_crc(rest.first(batch.size()));
    position += batch.size();
  }
}

TEST_F(DamagedRecordsTest, MutatedRecordsDecodeOrFailCleanly) {
  const std::vector<uint8_t> good = entries_at(
      0, {{4, EntryKind::kData, "abc"}, {4, EntryKind::kLeaderChange, ""}, {4, EntryKind::kData, "defgh"}});
  std::mt19937 random(16);
  int decoded = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> bytes = good;
    for (int flips = 1 + static_cast<int>(random() % 3); flips > 0; --flips) {
      bytes[random() % bytes.size()] = static_cast<uint8_t>(random());
    }
    if (random() % 4 == 0) bytes.resize(random() % bytes.size());
    if (random() % 2 == 0) fix_crcs(&bytes);
    std::vector<Entry> entries;
    Status s = decode_entries(bytes, 0, &entries);
    if (!s.ok()) {
      EXPECT_TRUE(s.is_corruption() || s.code() == Status::Code::kProtocol) << s.to_string();
      EXPECT_TRUE(entries.empty());
      continue;
    }
    ++decoded;
    std::vector<uint8_t> again;
    ASSERT_TRUE(encode_entries(0, entries, 4, 1, {}, &again).ok());
    std::vector<Entry> entries_again;
    ASSERT_TRUE(decode_entries(again, 0, &entries_again).ok());
    EXPECT_EQ(entries_again, entries);
  }
  EXPECT_GT(decoded, 0) << "some mutations (payload bytes) keep the records valid";
}

// --- DescribeQuorum ---------------------------------------------------------------

QuorumDescription sample_quorum() {
  QuorumDescription quorum;
  quorum.leader_id = 1;
  quorum.leader_epoch = 4;
  quorum.high_watermark = 120;
  quorum.voters = {{1, 130, 1000, 1000}, {2, 120, 990, 980}, {3, -1, -1, -1}};
  quorum.nodes = {{1, {{"CONTROLLER", "n1", 9093}}}, {2, {{"CONTROLLER", "n2", 9093}}}};
  return quorum;
}

// A partition group's entries are its producers' batches: they travel as
// they are (a compressed, multi-record batch too) and come back whole.
TEST_F(KafkaWireTest, APartitionGroupsBatchesTravelAsTheyAre) {
  GroupAddress address = group();
  address.topic_name = "sensors";
  address.topic_id = protocol::Uuid{{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}};
  address.partition = 2;
  address.entries = EntryForm::kBatch;
  auto batch_at = [](Offset at, Epoch epoch, int records, int64_t producer_id) {
    protocol::RecordBatchBuilder builder;
    builder.base_offset(at).partition_leader_epoch(epoch).producer(producer_id, 0, 0);
    for (int i = 0; i < records; ++i) builder.add("k", "value " + std::to_string(i), 1700000000000 + i);
    std::vector<uint8_t> bytes = builder.build();
    return std::string(bytes.begin(), bytes.end());
  };
  std::vector<uint8_t> empty = protocol::build_empty_batch(1700000000000);
  protocol::set_base_offset(empty, 20);
  protocol::set_partition_leader_epoch(empty, 4);
  FetchResponse response;
  response.leader_epoch = 4;
  response.leader_id = 2;
  response.high_watermark = 21;
  response.base_offset = 15;
  response.entries = {{3, EntryKind::kData, batch_at(15, 3, 3, 77), 3},
                      {3, EntryKind::kData, batch_at(18, 3, 2, -1), 2},
                      {4, EntryKind::kLeaderChange, std::string(empty.begin(), empty.end()), 1},
                      {4, EntryKind::kData, batch_at(21, 4, 1, 77), 1}};
  storage_.emplace_back();
  protocol::FetchResponse kafka;
  ASSERT_TRUE(to_kafka(response, address, EntryEncoding{{1, 2, 3}, 0}, &storage_.back(), &kafka).ok());
  std::string sent;
  for (const Entry& e : response.entries) sent += e.payload;
  EXPECT_EQ(std::string(storage_.back().begin(), storage_.back().end()), sent) << "the batches, byte for byte";
  FetchResponse back;
  Status s = from_kafka(through_bytes(kafka, kFetchVersion), address, 15, &back);
  ASSERT_TRUE(s.ok()) << s.to_string();
  expect_equal(back, response);
  // The controller log's form refuses them (several records, a producer).
  EXPECT_FALSE(from_kafka(through_bytes(kafka, kFetchVersion), [&] {
                 GroupAddress one = address;
                 one.entries = EntryForm::kRecord;
                 return one;
               }(), 15, &back).ok());
  // Not at the expected offset, a gap, a damaged batch: errors.
  EXPECT_TRUE(from_kafka(through_bytes(kafka, kFetchVersion), address, 14, &back).is_corruption());
  std::vector<Entry> entries;
  std::vector<uint8_t> gap(sent.begin(), sent.end());
  gap.erase(gap.begin() + static_cast<std::ptrdiff_t>(response.entries[0].payload.size()),
            gap.begin() + static_cast<std::ptrdiff_t>(response.entries[0].payload.size() + response.entries[1].payload.size()));
  EXPECT_TRUE(decode_entries(gap, 15, &entries, EntryForm::kBatch).is_corruption());
  EXPECT_TRUE(entries.empty());
  std::vector<uint8_t> damaged(sent.begin(), sent.end());
  damaged[damaged.size() - 3] ^= 0x40;
  EXPECT_TRUE(decode_entries(damaged, 15, &entries, EntryForm::kBatch).is_corruption());
  std::vector<uint8_t> cut(sent.begin(), sent.end() - 5);
  EXPECT_TRUE(decode_entries(cut, 15, &entries, EntryForm::kBatch).is_corruption());
  // An entry that is not its batch at its offset is not sent.
  FetchResponse wrong = response;
  wrong.base_offset = 16;
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(encode_entries(16, wrong.entries, 4, 2, EntryEncoding{}, &bytes, EntryForm::kBatch).is_invalid_argument());
}

TEST_F(KafkaWireTest, OneFetchCarriesManyGroupsEachAsItsOwnSingleFetch) {
  auto address = [](const std::string& topic, uint8_t id, int32_t partition) {
    GroupAddress a = group();
    a.topic_name = topic;
    a.topic_id = protocol::Uuid{{id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id}};
    a.partition = partition;
    a.entries = EntryForm::kBatch;
    return a;
  };
  std::vector<GroupFetch> fetches = {
      {address("sensors", 1, 0), Message{2, 1, 10, FetchRequest{3, 2, 40, 3, false}}},
      {address("sensors", 1, 1), Message{2, 1, 11, FetchRequest{5, 2, 0, 0, true}}},
      {address("alarms", 9, 0), Message{2, 1, 12, FetchRequest{1, 2, 7, 1, false}}},
  };
  const protocol::FetchRequest kafka =
      through_bytes(to_kafka_fetches(fetches, FetchLimits{400, 1 << 20}), kFetchVersion);
  EXPECT_EQ(kafka.max_wait_ms, 400);
  EXPECT_TRUE(kafka.unknown_tagged_fields.empty()) << "recovering is per partition";
  std::vector<FetchRequest> back;
  for (size_t t = 0; t < kafka.topics.size(); ++t) {
    for (size_t p = 0; p < kafka.topics[t].partitions.size(); ++p) {
      FetchRequest one;
      const GroupAddress& a = fetches[back.size()].group;
      Status s = from_kafka(single_fetch(kafka, t, p), a, &one);
      ASSERT_TRUE(s.ok()) << s.to_string();
      back.push_back(one);
      // Each part is its own group's: another group refuses it.
      EXPECT_FALSE(from_kafka(single_fetch(kafka, t, p), address("other", 5, 0), &one).ok());
    }
  }
  ASSERT_EQ(back.size(), fetches.size());
  for (size_t i = 0; i < fetches.size(); ++i) {
    const auto& sent = std::get<FetchRequest>(fetches[i].request.payload);
    EXPECT_EQ(back[i].fetch_offset, sent.fetch_offset) << i;
    EXPECT_EQ(back[i].current_leader_epoch, sent.current_leader_epoch) << i;
    EXPECT_EQ(back[i].last_fetched_epoch, sent.last_fetched_epoch) << i;
    EXPECT_EQ(back[i].recovering, sent.recovering) << i;
    EXPECT_EQ(back[i].replica_id, 2) << i;
  }
  // The answer: each group finds its own partition; one not answered is
  // missing.
  protocol::FetchResponse response;
  for (size_t i : {size_t{2}, size_t{0}}) {
    FetchResponse r;
    r.leader_epoch = 3;
    r.leader_id = 1;
    r.high_watermark = static_cast<Offset>(100 + i);
    storage_.emplace_back();
    protocol::FetchResponse one;
    ASSERT_TRUE(to_kafka(r, fetches[i].group, EntryEncoding{}, &storage_.back(), &one).ok());
    response.responses.push_back(std::move(one.responses[0]));
  }
  response = through_bytes(response, kFetchVersion);
  for (size_t i : {size_t{0}, size_t{2}}) {
    protocol::FetchResponse one;
    ASSERT_TRUE(single_fetch_response(response, fetches[i].group, &one)) << i;
    FetchResponse r;
    ASSERT_TRUE(from_kafka(one, fetches[i].group, std::get<FetchRequest>(fetches[i].request.payload).fetch_offset, &r)
                    .ok());
    EXPECT_EQ(r.high_watermark, static_cast<Offset>(100 + i));
  }
  protocol::FetchResponse missing;
  EXPECT_FALSE(single_fetch_response(response, fetches[1].group, &missing));
  // A single group's fetch keeps its recovering flag at the top level.
  const protocol::FetchRequest single =
      through_bytes(to_kafka(FetchRequest{5, 2, 0, 0, true}, fetches[1].group, {}), kFetchVersion);
  FetchRequest one;
  ASSERT_TRUE(from_kafka(single_fetch(single, 0, 0), fetches[1].group, &one).ok());
  EXPECT_TRUE(one.recovering);
}

TEST_F(KafkaWireTest, DescribeQuorumAnswersEveryVersion) {
  for (int16_t version = 0; version <= kDescribeQuorumVersion; ++version) {
    protocol::DescribeQuorumResponse kafka =
        through_bytes(describe_quorum_response(sample_quorum(), group(), version), version);
    ASSERT_EQ(kafka.topics.size(), 1u);
    EXPECT_EQ(kafka.topics[0].topic_name, "__cluster_metadata");
    const auto& p = kafka.topics[0].partitions.at(0);
    EXPECT_EQ(p.error_code, 0);
    EXPECT_EQ(p.leader_id, 1);
    EXPECT_EQ(p.leader_epoch, 4);
    EXPECT_EQ(p.high_watermark, 120);
    ASSERT_EQ(p.current_voters.size(), 3u);
    EXPECT_EQ(p.current_voters[1].replica_id, 2);
    EXPECT_EQ(p.current_voters[1].log_end_offset, 120);
    EXPECT_EQ(p.current_voters[1].last_caught_up_timestamp, version >= 1 ? 980 : -1);
    EXPECT_TRUE(p.observers.empty());
    EXPECT_EQ(kafka.nodes.size(), version >= 2 ? 2u : 0u);
    if (version >= 2) {
      EXPECT_EQ(kafka.nodes[1].listeners.at(0).host, "n2");
      EXPECT_FALSE(p.error_message.has_value());
    }
  }
}

TEST_F(KafkaWireTest, DescribeQuorumForAnotherPartitionGetsUnknownTopicOrPartition) {
  protocol::DescribeQuorumRequest request;
  request.topics.push_back({"__cluster_metadata", {{0, {}}}, {}});
  EXPECT_TRUE(check_describe_quorum_request(through_bytes(request, 2), group()).ok());
  request.topics[0].partitions[0].partition_index = 1;
  Status s = check_describe_quorum_request(request, group());
  EXPECT_EQ(kafka_code(s), ErrorCode::kUnknownTopicOrPartition) << s.to_string();
  protocol::DescribeQuorumResponse answer =
      through_bytes(describe_quorum_error(request, ErrorCode::kUnknownTopicOrPartition), 2);
  EXPECT_EQ(answer.error_code, 0);
  ASSERT_EQ(answer.topics.at(0).partitions.size(), 1u);
  EXPECT_EQ(answer.topics[0].partitions[0].partition_index, 1);
  EXPECT_EQ(answer.topics[0].partitions[0].error_code, protocol::to_int(ErrorCode::kUnknownTopicOrPartition));
}

}  // namespace
}  // namespace eddy::raft
