// port/status.h: one result type for every room.
#include "port/status.h"

#include <gtest/gtest.h>

#include <string>
#include <system_error>
#include <utility>

namespace eddy {
namespace {

using Code = Status::Code;

TEST(Status, DefaultIsOkWithNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Code::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.kafka_error_code(), 0);
  EXPECT_FALSE(s.retriable());
  EXPECT_EQ(s.to_string(), "OK");
  EXPECT_TRUE(Status::ok_status().ok());
}

TEST(Status, OkIsOnePointer) {
  // The append path returns Status: an ok one is a null pointer, nothing more.
  static_assert(sizeof(Status) == sizeof(void*));
}

TEST(Status, FactoriesSetCodeAndMessage) {
  const std::pair<Status, Code> cases[] = {
      {Status::invalid_argument("m"), Code::kInvalidArgument},
      {Status::not_found("m"), Code::kNotFound},
      {Status::already_exists("m"), Code::kAlreadyExists},
      {Status::not_supported("m"), Code::kNotSupported},
      {Status::corruption("m"), Code::kCorruption},
      {Status::io_error("m"), Code::kIOError},
      {Status::no_space("m"), Code::kNoSpace},
      {Status::log_full("m"), Code::kLogFull},
      {Status::too_large("m"), Code::kTooLarge},
      {Status::out_of_range("m"), Code::kOutOfRange},
      {Status::locked("m"), Code::kLocked},
      {Status::network("m"), Code::kNetwork},
      {Status::timeout("m"), Code::kTimeout},
      {Status::protocol_error("m"), Code::kProtocol},
      {Status::unsupported_version("m"), Code::kUnsupportedVersion},
      {Status::codec("m"), Code::kCodec},
      {Status::error(Code::kBrokerError, "m"), Code::kBrokerError},
  };
  for (const auto& [s, code] : cases) {
    EXPECT_FALSE(s.ok()) << status_code_name(code);
    EXPECT_EQ(s.code(), code);
    EXPECT_EQ(s.message(), "m");
    EXPECT_EQ(s.kafka_error_code(), 0);
    EXPECT_EQ(s.to_string(), std::string(status_code_name(code)) + ": m");
  }
}

TEST(Status, Predicates) {
  EXPECT_TRUE(Status::not_found("x").is_not_found());
  EXPECT_TRUE(Status::already_exists("x").is_already_exists());
  EXPECT_TRUE(Status::invalid_argument("x").is_invalid_argument());
  EXPECT_TRUE(Status::corruption("x").is_corruption());
  EXPECT_TRUE(Status::not_supported("x").is_not_supported());
  EXPECT_TRUE(Status::io_error("x").is_io_error());
  EXPECT_FALSE(Status::io_error("x").is_not_found());
  EXPECT_FALSE(Status().is_io_error());
}

TEST(Status, ToStringWithoutMessageIsTheCodeName) {
  EXPECT_EQ(Status::io_error("").to_string(), "I/O error");
  EXPECT_EQ(Status::io_error("disk gone").to_string(), "I/O error: disk gone");
}

TEST(Status, CopiesAreIndependent) {
  Status a = Status::network("broker b:9092 closed");
  Status b = a;
  Status c;
  c = b.with_context("produce to t-0");
  EXPECT_EQ(a.message(), "broker b:9092 closed");
  EXPECT_EQ(b.message(), "broker b:9092 closed");
  EXPECT_EQ(c.message(), "produce to t-0: broker b:9092 closed");
  c = Status();
  EXPECT_TRUE(c.ok());
  Status d = a;
  d = d;  // self-assignment keeps it
  EXPECT_EQ(d.message(), "broker b:9092 closed");
}

TEST(Status, MovedFromIsOk) {
  Status a = Status::timeout("t");
  Status b = std::move(a);
  EXPECT_EQ(b.code(), Code::kTimeout);
  EXPECT_TRUE(a.ok());  // NOLINT(bugprone-use-after-move): the moved-from state is documented as ok
}

TEST(Status, WithContextPrefixesAndKeepsOkOk) {
  EXPECT_TRUE(Status().with_context("ignored").ok());
  Status s = Status::protocol_error("bad frame").with_context("fetch");
  EXPECT_EQ(s.code(), Code::kProtocol);
  EXPECT_EQ(s.message(), "fetch: bad frame");
}

TEST(Status, WithMessageKeepsCodeAndKafkaCode) {
  EXPECT_TRUE(Status().with_message("x").ok());
  Status s = Status::kafka(Code::kBrokerError, 7, true, "REQUEST_TIMED_OUT").with_message("other");
  EXPECT_EQ(s.code(), Code::kBrokerError);
  EXPECT_EQ(s.kafka_error_code(), 7);
  EXPECT_TRUE(s.retriable());
  EXPECT_EQ(s.message(), "other");
}

TEST(Status, RetriableFollowsTheClientRules) {
  EXPECT_TRUE(Status::network("x").retriable());
  EXPECT_TRUE(Status::timeout("x").retriable());
  EXPECT_FALSE(Status::protocol_error("x").retriable());
  EXPECT_FALSE(Status::invalid_argument("x").retriable());
  EXPECT_FALSE(Status::io_error("x").retriable());
  // Without a Kafka code, a not-found is final.
  EXPECT_FALSE(Status::not_found("x").retriable());
  EXPECT_TRUE(Status::kafka(Code::kNotFound, 3, true, "UNKNOWN_TOPIC_OR_PARTITION").retriable());
  EXPECT_FALSE(Status::kafka(Code::kBrokerError, 10, false, "MESSAGE_TOO_LARGE").retriable());
  EXPECT_TRUE(Status::kafka(Code::kBrokerError, 6, true, "NOT_LEADER_OR_FOLLOWER").retriable());
}

TEST(Status, KafkaCarriesTheCode) {
  Status s = Status::kafka(Code::kBrokerError, 36, false, "create t: TOPIC_ALREADY_EXISTS");
  EXPECT_EQ(s.kafka_error_code(), 36);
  Status t = s.with_context("tool");
  EXPECT_EQ(t.kafka_error_code(), 36);
  EXPECT_EQ(t.message(), "tool: create t: TOPIC_ALREADY_EXISTS");
}

TEST(Status, FromErrorCode) {
  EXPECT_TRUE(Status::from_error_code(std::error_code()).ok());
  Status full = Status::from_error_code(std::make_error_code(std::errc::no_space_on_device), "grow x.log");
  EXPECT_EQ(full.code(), Code::kNoSpace);
  EXPECT_EQ(full.message().rfind("grow x.log: ", 0), 0u) << full.message();
  Status io = Status::from_error_code(std::make_error_code(std::errc::io_error));
  EXPECT_EQ(io.code(), Code::kIOError);
  EXPECT_EQ(io.message(), std::make_error_code(std::errc::io_error).message());
}

TEST(Status, EveryCodeHasAName) {
  for (int c = 0; c <= static_cast<int>(Code::kCodec); ++c) {
    EXPECT_STRNE(status_code_name(static_cast<Code>(c)), "unknown") << c;
  }
}

}  // namespace
}  // namespace eddy
