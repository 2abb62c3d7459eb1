// The control socket: ControlServer on a running reactor, control_request
// and raw Unix-socket clients against it.
#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/write.hpp>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "net/control_client.h"
#include "net/control_server.h"
#include "net/local_socket.h"
#include "net/reactor.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::net {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int64_t kRequestTimeoutMs = 10000;

using eddy::testing::TempDir;

// A ControlServer on a reactor run by a background thread. The handler
// records every command and answers by `reply_for` (default: "ok\n" + the
// command).
class ControlFixture {
 public:
  explicit ControlFixture(ControlServerOptions options = ControlServerOptions())
      : server_(std::make_unique<ControlServer>(
            reactor_, [this](const std::string& command) { return on_command(command); }, options)) {}

  ~ControlFixture() {
    if (thread_.joinable()) {
      reactor_.post([this] {
        server_->stop();
        reactor_.stop();
      });
      thread_.join();
    }
    server_.reset();
  }

  // Starts listening (before the reactor thread exists), then the thread.
  bool start(const std::string& path, std::string* error) {
    Status s = server_->start(path);
    if (!s.ok()) *error = s.message();
    if (s.ok()) thread_ = std::thread([this] { reactor_.run(); });
    return s.ok();
  }

  // Runs fn on the reactor thread and returns its result.
  template <typename Fn>
  auto on_reactor(Fn fn) -> decltype(fn()) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto result = task.get_future();
    reactor_.post([&task] { task(); });
    return result.get();
  }

  size_t open_connections() {
    return on_reactor([this] { return server_->open_connections(); });
  }
  void stop_server() {
    on_reactor([this] {
      server_->stop();
      return 0;
    });
  }

  int calls() const { return calls_.load(); }
  std::vector<std::string> commands() {
    std::lock_guard<std::mutex> lock(mu_);
    return commands_;
  }

  std::function<std::string(const std::string&)> reply_for;  // set before traffic

 private:
  std::string on_command(const std::string& command) {
    EXPECT_TRUE(reactor_.in_reactor_thread());
    calls_.fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      commands_.push_back(command);
    }
    return reply_for ? reply_for(command) : control_reply_ok(command);
  }

  Reactor reactor_;
  std::unique_ptr<ControlServer> server_;
  std::thread thread_;
  std::atomic<int> calls_{0};
  std::mutex mu_;
  std::vector<std::string> commands_;
};

// A blocking Unix-socket client; every operation gives up after its timeout.
class RawClient {
 public:
  bool connect(const std::string& path) {
    std::string error;
    LocalProtocol::endpoint endpoint;
    if (!local_endpoint_for(path, &endpoint, &error)) return false;
    return !connect_local(io_, &socket_, endpoint, 5000);
  }

  bool write(const std::string& bytes) {
    std::error_code ec;
    asio::write(socket_, asio::buffer(bytes), ec);
    return !ec;
  }

  // Reads until the server closes (EOF or reset). True when it closed
  // within the timeout; *received gets the bytes read before that.
  bool read_until_closed(std::chrono::milliseconds timeout, std::string* received) {
    received->clear();
    bool closed = false;
    char chunk[4096];
    std::function<void()> next = [&] {
      socket_.async_read_some(asio::buffer(chunk), [&](const std::error_code& ec, size_t n) {
        if (ec) {
          closed = ec != asio::error::operation_aborted;
          return;
        }
        received->append(chunk, n);
        next();
      });
    };
    next();
    io_.restart();
    io_.run_for(timeout);
    if (!closed) {
      std::error_code ignored;
      socket_.cancel(ignored);
      io_.restart();
      io_.run();
    }
    return closed;
  }

 private:
  asio::io_context io_{1};
  LocalProtocol::socket socket_{io_};
};

// Leaves a socket file at path that nobody listens on (as a killed eddy does).
void make_stale_socket(const std::string& path) {
  asio::io_context io(1);
  LocalProtocol::acceptor acceptor(io, LocalProtocol::endpoint(path));
  acceptor.close();
}

TEST(ControlReplyTest, BuildAndParse) {
  std::string body;
  EXPECT_EQ(control_reply_ok("a table\n"), "ok\na table\n");
  EXPECT_EQ(control_reply_error("unknown command"), "error: unknown command\n");
  EXPECT_TRUE(parse_control_reply("ok\nline 1\nline 2\n", &body).ok());
  EXPECT_EQ(body, "line 1\nline 2\n");
  EXPECT_TRUE(parse_control_reply("ok\n", &body).ok());
  EXPECT_EQ(body, "");
  Status refused = parse_control_reply("error: unknown command\n", &body);
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(refused.message(), "unknown command");
  EXPECT_EQ(parse_control_reply("error: \n", &body).message(), "(no reason given)");
  Status empty = parse_control_reply("", &body);
  EXPECT_EQ(empty.code(), Status::Code::kProtocol);
  EXPECT_NE(empty.message().find("without a reply"), std::string::npos) << empty.message();
  Status garbled = parse_control_reply("okay", &body);
  EXPECT_EQ(garbled.code(), Status::Code::kProtocol);
  EXPECT_NE(garbled.message().find("unexpected reply 'okay'"), std::string::npos) << garbled.message();
}

TEST(ControlSocketTest, RoundTrip) {
  TempDir dir;
  ControlFixture fixture;
  fixture.reply_for = [](const std::string&) { return control_reply_ok("LINK  STATE\nc1    up\n"); };
  std::string path = dir.file("eddy.sock"), error;
  ASSERT_TRUE(fixture.start(path, &error)) << error;
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);

  std::string reply;
  ASSERT_EQ(control_request(path, "forward status", kRequestTimeoutMs, &reply, &error), ControlStatus::kOk) << error;
  EXPECT_EQ(reply, "ok\nLINK  STATE\nc1    up\n");
  std::string body;
  EXPECT_TRUE(parse_control_reply(reply, &body).ok());
  EXPECT_EQ(body, "LINK  STATE\nc1    up\n");
  EXPECT_EQ(fixture.commands(), std::vector<std::string>{"forward status"});
}

TEST(ControlSocketTest, HandlerSeesTheExactCommand) {
  TempDir dir;
  ControlFixture fixture;
  std::string path = dir.file("eddy.sock"), error, reply;
  ASSERT_TRUE(fixture.start(path, &error)) << error;

  const std::string command = "  forward status\tjson \xC3\xBC\r";  // spaces, tab, UTF-8, CR kept
  ASSERT_EQ(control_request(path, command, kRequestTimeoutMs, &reply, &error), ControlStatus::kOk) << error;
  EXPECT_EQ(reply, "ok\n" + command);
  ASSERT_EQ(control_request(path, "", kRequestTimeoutMs, &reply, &error), ControlStatus::kOk) << error;
  EXPECT_EQ(reply, "ok\n");

  // Bytes after the newline are not part of the command; a command of
  // exactly the maximum length is accepted.
  RawClient raw;
  ASSERT_TRUE(raw.connect(path));
  ASSERT_TRUE(raw.write("first line\nsecond line\n"));
  ASSERT_TRUE(raw.read_until_closed(5000ms, &reply));
  EXPECT_EQ(reply, "ok\nfirst line");
  const std::string longest(kMaxControlCommandBytes, 'l');
  ASSERT_EQ(control_request(path, longest, kRequestTimeoutMs, &reply, &error), ControlStatus::kOk) << error;
  EXPECT_EQ(reply, "ok\n" + longest);
  EXPECT_EQ(fixture.commands(), (std::vector<std::string>{command, "", "first line", longest}));
}

TEST(ControlSocketTest, LargeReplyArrivesWhole) {
  TempDir dir;
  ControlFixture fixture;
  std::string big(3 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  fixture.reply_for = [&](const std::string&) { return control_reply_ok(big); };
  std::string path = dir.file("eddy.sock"), error, reply;
  ASSERT_TRUE(fixture.start(path, &error)) << error;
  ASSERT_EQ(control_request(path, "big", kRequestTimeoutMs, &reply, &error), ControlStatus::kOk) << error;
  EXPECT_TRUE(reply == "ok\n" + big) << "reply of " << reply.size() << " bytes differs";
}

TEST(ControlSocketTest, ReplyOverTheCapIsRefused) {
  TempDir dir;
  ControlFixture fixture;
  fixture.reply_for = [](const std::string&) { return std::string(kMaxControlReplyBytes + 1, 'r'); };
  std::string path = dir.file("eddy.sock"), error, reply;
  ASSERT_TRUE(fixture.start(path, &error)) << error;
  EXPECT_EQ(control_request(path, "huge", kRequestTimeoutMs, &reply, &error), ControlStatus::kFailed);
  EXPECT_NE(error.find("longer than 16777216 bytes"), std::string::npos) << error;
  EXPECT_TRUE(reply.empty());
}

TEST(ControlSocketTest, ConcurrentClients) {
  TempDir dir;
  ControlFixture fixture;
  std::string path = dir.file("eddy.sock"), error, reply;
  ASSERT_TRUE(fixture.start(path, &error)) << error;

  // A slow client holding half a command does not hold up another.
  RawClient slow;
  ASSERT_TRUE(slow.connect(path));
  ASSERT_TRUE(slow.write("slow "));
  ASSERT_EQ(control_request(path, "fast", kRequestTimeoutMs, &reply, &error), ControlStatus::kOk) << error;
  EXPECT_EQ(reply, "ok\nfast");
  ASSERT_TRUE(slow.write("one\n"));
  ASSERT_TRUE(slow.read_until_closed(5000ms, &reply));
  EXPECT_EQ(reply, "ok\nslow one");
  EXPECT_EQ(fixture.commands(), (std::vector<std::string>{"fast", "slow one"}));

  // Several at once, each gets its own answer.
  constexpr int kClients = 8;
  std::vector<std::string> replies(kClients);
  std::vector<ControlStatus> statuses(kClients, ControlStatus::kFailed);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      std::string why;
      statuses[i] = control_request(path, "client " + std::to_string(i), kRequestTimeoutMs, &replies[i], &why);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kClients; ++i) {
    EXPECT_EQ(statuses[i], ControlStatus::kOk) << i;
    EXPECT_EQ(replies[i], "ok\nclient " + std::to_string(i));
  }
  EXPECT_EQ(fixture.calls(), 2 + kClients);
}

TEST(ControlSocketTest, OversizeCommandClosesWithoutCallingTheHandler) {
  TempDir dir;
  ControlFixture fixture;
  std::string path = dir.file("eddy.sock"), error, reply;
  ASSERT_TRUE(fixture.start(path, &error)) << error;

  RawClient raw;
  ASSERT_TRUE(raw.connect(path));
  raw.write(std::string(kMaxControlCommandBytes + 1, 'x') + "\n");  // may fail once the server closed
  EXPECT_TRUE(raw.read_until_closed(5000ms, &reply));
  EXPECT_EQ(reply, "");
  EXPECT_EQ(fixture.calls(), 0);

  // The client refuses to send one.
  EXPECT_EQ(control_request(path, std::string(kMaxControlCommandBytes + 1, 'x'), kRequestTimeoutMs, &reply, &error),
            ControlStatus::kFailed);
  EXPECT_NE(error.find("at most 1024 bytes"), std::string::npos) << error;
  EXPECT_EQ(control_request(path, "two\nlines", kRequestTimeoutMs, &reply, &error), ControlStatus::kFailed);

  // The next client is served.
  ASSERT_EQ(control_request(path, "next", kRequestTimeoutMs, &reply, &error), ControlStatus::kOk) << error;
  EXPECT_EQ(reply, "ok\nnext");
  EXPECT_EQ(fixture.calls(), 1);
}

TEST(ControlSocketTest, InvalidUtf8IsAnsweredWithAnError) {
  TempDir dir;
  ControlFixture fixture;
  std::string path = dir.file("eddy.sock"), error, reply;
  ASSERT_TRUE(fixture.start(path, &error)) << error;
  for (const std::string bad : {"\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF"}) {
    ASSERT_EQ(control_request(path, "status " + bad, kRequestTimeoutMs, &reply, &error), ControlStatus::kOk) << error;
    EXPECT_EQ(reply, "error: the command is not valid UTF-8\n");
  }
  EXPECT_EQ(fixture.calls(), 0);
}

TEST(ControlSocketTest, SilentClientIsDroppedAfterTheTimeout) {
  TempDir dir;
  ControlServerOptions options;
  options.timeout_ms = 200;
  ControlFixture fixture(options);
  std::string path = dir.file("eddy.sock"), error, reply;
  ASSERT_TRUE(fixture.start(path, &error)) << error;

  RawClient silent, partial;
  auto started = Clock::now();
  ASSERT_TRUE(silent.connect(path));
  ASSERT_TRUE(partial.connect(path));
  ASSERT_TRUE(partial.write("forward sta"));  // never finished
  EXPECT_TRUE(silent.read_until_closed(5000ms, &reply));
  EXPECT_EQ(reply, "");
  EXPECT_TRUE(partial.read_until_closed(5000ms, &reply));
  EXPECT_EQ(reply, "");
  auto waited = Clock::now() - started;
  EXPECT_GE(waited, 150ms);
  EXPECT_LT(waited, 4000ms);
  EXPECT_EQ(fixture.calls(), 0);
  EXPECT_EQ(fixture.open_connections(), 0u);

  ASSERT_EQ(control_request(path, "after", kRequestTimeoutMs, &reply, &error), ControlStatus::kOk) << error;
  EXPECT_EQ(reply, "ok\nafter");
}

TEST(ControlSocketTest, StaleSocketFileIsReplaced) {
  TempDir dir;
  std::string path = dir.file("eddy.sock"), error, reply;
  make_stale_socket(path);
  ASSERT_EQ(fs::symlink_status(path).type(), fs::file_type::socket);
  EXPECT_EQ(control_request(path, "forward status", kRequestTimeoutMs, &reply, &error), ControlStatus::kRefused);
  EXPECT_NE(error.find("stale control socket at " + path), std::string::npos) << error;

  ControlFixture fixture;
  ASSERT_TRUE(fixture.start(path, &error)) << error;
  ASSERT_EQ(control_request(path, "forward status", kRequestTimeoutMs, &reply, &error), ControlStatus::kOk) << error;
  EXPECT_EQ(reply, "ok\nforward status");
}

TEST(ControlSocketTest, LiveServerMakesASecondStartFail) {
  TempDir dir;
  std::string path = dir.file("eddy.sock"), error, reply;
  ControlFixture first;
  ASSERT_TRUE(first.start(path, &error)) << error;
  {
    Reactor other_reactor;  // as in another process: never run here
    ControlServer second(other_reactor, [](const std::string&) { return control_reply_ok("second"); });
    error = second.start(path).message();
    EXPECT_FALSE(error.empty());
    EXPECT_NE(error.find("another process is listening on it"), std::string::npos) << error;
    EXPECT_NE(error.find(path), std::string::npos) << error;
    EXPECT_EQ(second.path(), "");
  }  // destroying the failed server leaves the first one's socket alone
  ASSERT_EQ(control_request(path, "still here", kRequestTimeoutMs, &reply, &error), ControlStatus::kOk) << error;
  EXPECT_EQ(reply, "ok\nstill here");
}

TEST(ControlSocketTest, OtherFileAtThePathIsLeftAlone) {
  TempDir dir;
  std::string path = dir.file("eddy.sock"), error;
  std::ofstream(path) << "not a socket";
  Reactor reactor;
  ControlServer server(reactor, [](const std::string&) { return control_reply_ok(""); });
  error = server.start(path).message();
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find("is not a socket"), std::string::npos) << error;
  EXPECT_EQ(fs::symlink_status(path).type(), fs::file_type::regular);
}

TEST(ControlSocketTest, StopRemovesTheSocketFile) {
  TempDir dir;
  std::string path = dir.file("eddy.sock"), error, reply;
  ControlFixture fixture;
  ASSERT_TRUE(fixture.start(path, &error)) << error;
  RawClient waiting;
  ASSERT_TRUE(waiting.connect(path));
  auto deadline = Clock::now() + 5s;
  while (fixture.open_connections() != 1 && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(fixture.open_connections(), 1u);
  fixture.stop_server();
  EXPECT_FALSE(fs::exists(fs::symlink_status(path)));
  EXPECT_TRUE(waiting.read_until_closed(5000ms, &reply));  // open connections are closed
  EXPECT_EQ(control_request(path, "forward status", kRequestTimeoutMs, &reply, &error), ControlStatus::kNoSocket);
}

TEST(ControlSocketTest, MissingSocket) {
  TempDir dir;
  std::string reply, error;
  std::string path = dir.file("eddy.sock");
  EXPECT_EQ(control_request(path, "forward status", kRequestTimeoutMs, &reply, &error), ControlStatus::kNoSocket);
  EXPECT_EQ(error, "no control socket at " + path);
  path = dir.file("no-such-dir/eddy.sock");
  EXPECT_EQ(control_request(path, "forward status", kRequestTimeoutMs, &reply, &error), ControlStatus::kNoSocket);
  EXPECT_EQ(error, "no control socket at " + path);
}

TEST(ControlSocketTest, UnansweredRequestTimesOut) {
  TempDir dir;
  std::string path = dir.file("eddy.sock"), error, reply;
  asio::io_context io(1);
  LocalProtocol::acceptor mute(io, LocalProtocol::endpoint(path));  // listens, never accepts nor answers
  auto started = Clock::now();
  EXPECT_EQ(control_request(path, "forward status", 200, &reply, &error), ControlStatus::kTimeout);
  EXPECT_GE(Clock::now() - started, 150ms);
  EXPECT_NE(error.find("timed out after 200 ms"), std::string::npos) << error;
}

TEST(ControlSocketTest, PathTooLong) {
  std::string path = "/tmp/" + std::string(kMaxLocalSocketPathBytes, 'd') + "/eddy.sock";
  std::string limit = std::to_string(kMaxLocalSocketPathBytes);
  std::string error, reply;
  Reactor reactor;
  ControlServer server(reactor, [](const std::string&) { return control_reply_ok(""); });
  error = server.start(path).message();
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find("'" + path + "'"), std::string::npos) << error;
  EXPECT_NE(error.find("at most " + limit), std::string::npos) << error;

  EXPECT_EQ(control_request(path, "forward status", kRequestTimeoutMs, &reply, &error), ControlStatus::kFailed);
  EXPECT_NE(error.find("'" + path + "'"), std::string::npos) << error;
  EXPECT_NE(error.find("at most " + limit), std::string::npos) << error;
}

}  // namespace
}  // namespace eddy::net
