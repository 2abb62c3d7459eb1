// libFuzzer target: a whole client byte stream (several request frames, cut
// at arbitrary points) through a real net::Connection into a real broker: a
// meta store in SQLite, partition logs with their flusher thread, the group
// coordinator, on a temporary data directory (under /dev/shm when there is
// one: fdatasync on tmpfs costs nothing). Not only the codec: framing,
// pipelining, parked requests, topic auto-creation, produce, fetch (file
// regions), groups and admin requests, over state that persists from one
// input to the next.
//
// Input: byte 0 says how many cuts follow (its low 4 bits), each a
// big-endian uint16 offset into the stream; the rest is the stream. So a
// seed is 0x00 followed by size-prefixed frames (tests/fuzz/seeds/live_broker,
// made by make_live_broker_seeds.py from the captured client frames).
//
// Per input: a new connection; each chunk is released to it and the
// reactor runs until nothing is ready (the server answered what it could),
// then the client's end of stream, which closes the connection (parked
// fetches are dropped with it); a connection that stopped reading before it
// (backpressure, a close waiting behind a parked request) is closed by the
// server. Acks=all produces parked for the flusher
// are waited for briefly before the next chunk.
//
// Findings besides crashes, sanitizer reports and timeouts (abort()): what
// the server wrote is not a sequence of size-prefixed frames (the last may
// be cut by a close), or their correlation ids are not those of requests of
// the stream, in order (a subsequence: acks=0 produces get no answer, and a
// refused request closes the connection); request memory still held after
// the connection closed.
//
// The world (data directory, broker) is rebuilt every kResetEvery inputs,
// which bounds what accumulates on disk over a long run (make fuzz-long).
#include <asio/io_context.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "app/broker_frame_handler.h"
#include "broker/broker.h"
#include "client/compression.h"
#include "client/record_stream.h"
#include "in_memory_stream.h"
#include "meta/meta_store.h"
#include "net/connection.h"
#include "net/reactor.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/big_endian.h"
#include "storage/log_manager.h"

namespace eddy::fuzz {
namespace {

constexpr uint64_t kDiskBudgetBytes = uint64_t{48} << 20;
constexpr uint64_t kSegmentBytes = uint64_t{1} << 20;
constexpr uint64_t kResetEvery = 20000;
// Handlers one input may run before it counts as a spinning server.
constexpr uint64_t kMaxHandlersPerInput = 2000000;
// How long a chunk waits for acks=all produces parked for the flusher.
constexpr int64_t kDurableWaitMs = 50;

void fail(const char* what) {
  std::fprintf(stderr, "fuzz_live_broker: %s\n", what);
  std::abort();
}

std::string temp_base() {
  if (::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != 0 ? tmp : "/tmp";
}

broker::BrokerOptions broker_options() {
  broker::BrokerOptions o;
  o.advertised_listeners.push_back({"PLAINTEXT", "127.0.0.1", 9092});
  o.auto_create_topics = true;
  o.num_partitions = 2;
  o.group_initial_rebalance_delay_ms = 0;  // joins complete within an input
  o.log_defaults.segment_bytes = kSegmentBytes;
  o.log_defaults.acks_all_waits_for = storage::AcksAllWaitsFor::kPageCache;
  // The codecs, as src/app/broker_options_from_config.cc sets them.
  o.decompress = [](protocol::Compression codec, std::span<const uint8_t> in, std::vector<uint8_t>* out) {
    return client::decompress(codec, in, size_t{16} << 20, out).ok();
  };
  const size_t bound = static_cast<size_t>(o.max_decompressed_batch_bytes);
  o.open_record_stream = [bound](protocol::Compression codec, std::span<const uint8_t> compressed) {
    return client::open_record_stream(codec, compressed, bound);
  };
  return o;
}

// Everything an input talks to. Destroyed in the reverse order of its parts.
struct World {
  std::string dir;
  net::Reactor reactor;
  std::unique_ptr<storage::LogManager> logs;
  std::unique_ptr<meta::MetaStore> meta;
  std::unique_ptr<broker::Broker> broker;
  broker::Broker* serving = nullptr;  // what the handler hands frames to
  std::unique_ptr<app::BrokerFrameHandler> handler;
  net::RequestMemory memory{uint64_t{100} << 20};
  net::ConnectionLimits limits;
  uint64_t next_connection_id = 1;
  uint64_t inputs = 0;

  World() {
    std::string pattern = temp_base() + "/eddy-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) fail("cannot create the data directory");
    dir = pattern;
    if (!storage::LogManager::open(dir, &logs).ok()) fail("cannot open the logs");
    logs->budget().set_limit(kDiskBudgetBytes);
    if (!meta::MetaStore::open(dir + "/eddy.db", &meta).ok()) fail("cannot open the meta store");
    broker = std::make_unique<broker::Broker>(reactor, broker_options(), meta.get(), logs.get());
    if (!broker->start().ok()) fail("the broker does not start");
    create_topic("capture", 1, {});
    create_topic("sensors", 3, {});
    create_topic("durable", 1, {{"eddy.acks.all.waits.for", "disk"}, {"segment.bytes", "65536"}});
    serving = broker.get();
    // eddy serve's frame handler (SASL frame bound as its default).
    handler = std::make_unique<app::BrokerFrameHandler>(&serving, 524288);
    limits.max_frame_bytes = 1 << 20;
    limits.read_buffer_bytes = 4096;  // inputs reach the large-frame path
  }

  ~World() {
    drain_ready(reactor);
    handler.reset();
    broker.reset();
    drain_ready(reactor);
    if (!logs->close().ok()) fail("closing the logs failed");
    if (!meta->close().ok()) fail("closing the meta store failed");
    logs.reset();
    meta.reset();
    port::remove_tree(dir);
  }

  void create_topic(const std::string& name, int32_t partitions, const broker::ConfigMap& configs) {
    broker::TopicResult r = broker->topics().create(name, partitions, 1, configs, false, nullptr);
    if (!r.ok()) {
      std::fprintf(stderr, "fuzz_live_broker: topic %s: %s\n", name.c_str(), r.message.c_str());
      std::abort();
    }
  }

  // Runs ready handlers until there are none.
  static void drain_ready(net::Reactor& reactor, uint64_t* budget = nullptr) {
    asio::io_context& io = reactor.io_context();
    for (;;) {
      if (io.stopped()) io.restart();
      const size_t ran = io.poll();
      if (ran == 0) return;
      if (budget != nullptr) {
        if (*budget < ran) fail("the server keeps running handlers (spins) after an input");
        *budget -= ran;
      }
    }
  }
};

World* world = nullptr;

World& the_world() {
  if (world != nullptr && world->inputs >= kResetEvery) {
    delete world;
    world = nullptr;
  }
  if (world == nullptr) {
    // At exit (libFuzzer's end of run) the data directory goes too: it is
    // on tmpfs, i.e. in memory, until removed. After a crash it stays.
    static const bool removed_at_exit = std::atexit([] {
      delete world;
      world = nullptr;
    }) == 0;
    (void)removed_at_exit;
    world = new World();
  }
  ++world->inputs;
  return *world;
}

// The correlation ids of the frames the server will read from stream, in
// order, as the connection frames them; -1 for a frame too short to have one.
std::vector<int64_t> request_ids(const std::vector<uint8_t>& stream, int32_t max_frame_bytes) {
  std::vector<int64_t> ids;
  size_t at = 0;
  while (stream.size() - at >= 4) {
    const int32_t size = static_cast<int32_t>(protocol::load_be32(stream.data() + at));
    if (size < 0 || size > max_frame_bytes || stream.size() - at - 4 < static_cast<size_t>(size)) break;
    ids.push_back(size >= 8 ? static_cast<int32_t>(protocol::load_be32(stream.data() + at + 8)) : -1);
    at += 4 + static_cast<size_t>(size);
  }
  return ids;
}

// What the server wrote: size-prefixed frames, each answering a request of
// the stream, in order. The last one may be cut short: the server closes a
// connection at once when a frame's size is out of bounds, and a response
// whose write was still under way (a fetch's file region after its header)
// goes no further.
void check_responses(const std::vector<uint8_t>& written, const std::vector<int64_t>& requests) {
  size_t at = 0;
  size_t next_request = 0;
  while (at < written.size()) {
    const size_t left = written.size() - at;
    if (left < 4) return;  // a cut size prefix
    const int32_t size = static_cast<int32_t>(protocol::load_be32(written.data() + at));
    if (size < 4) fail("the server wrote a response too short for a correlation id");
    if (left < 8) return;
    const int64_t id = static_cast<int32_t>(protocol::load_be32(written.data() + at + 4));
    while (next_request < requests.size() && requests[next_request] != id) ++next_request;
    if (next_request == requests.size()) {
      fail("the server answered with a correlation id that no later request of the stream carries");
    }
    ++next_request;
    at += std::min(left, 4 + static_cast<size_t>(size));
  }
}

// Lets acks=all produces parked for the flusher finish (real time, briefly).
void wait_for_durable_produces(World& w, uint64_t* budget) {
  const int64_t until = port::monotonic_millis() + kDurableWaitMs;
  while (w.broker->parked_produces() > 0 && port::monotonic_millis() < until) {
    w.reactor.io_context().run_for(std::chrono::milliseconds(1));
    World::drain_ready(w.reactor, budget);
  }
}

void run_input(World& w, std::vector<uint8_t> stream, const std::vector<size_t>& cuts) {
  auto wire = std::make_shared<InMemoryWire>();
  const std::vector<int64_t> requests = request_ids(stream, w.limits.max_frame_bytes);
  wire->script(std::move(stream), cuts);
  const uint64_t id = w.next_connection_id++;
  auto connection = std::make_shared<net::Connection<InMemoryStream>>(
      InMemoryStream(w.reactor.io_context(), wire), id, "127.0.0.1:" + std::to_string(40000 + id % 20000),
      "PLAINTEXT", w.limits, w.handler.get(), nullptr, &w.memory);
  uint64_t budget = kMaxHandlersPerInput;
  connection->start();
  World::drain_ready(w.reactor, &budget);
  while (!wire->closed() && wire->release_next()) {
    World::drain_ready(w.reactor, &budget);
    wait_for_durable_produces(w, &budget);
  }
  wire->release_end();
  World::drain_ready(w.reactor, &budget);
  if (!wire->closed()) {
    // Open only while it reads nothing, so the end of stream is not seen:
    // too many requests in flight behind a parked one, or a
    // close_connection() waiting for a parked answer. The server closes it
    // (as its idle or stop deadline would), dropping what is parked.
    connection->close();
    World::drain_ready(w.reactor, &budget);
  }
  if (w.memory.held() != 0) fail("request memory is still held after the connection closed");
  check_responses(wire->written(), requests);
}

}  // namespace
}  // namespace eddy::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  eddy::port::set_log_level(eddy::port::LogLevel::kError);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t cut_count = data[0] & 0x0f;
  size_t at = 1;
  std::vector<size_t> cuts;
  for (size_t i = 0; i < cut_count && size - at >= 2; ++i, at += 2) {
    cuts.push_back((size_t{data[at]} << 8) | data[at + 1]);
  }
  std::sort(cuts.begin(), cuts.end());
  std::vector<uint8_t> stream(data + at, data + size);
  eddy::fuzz::run_input(eddy::fuzz::the_world(), std::move(stream), cuts);
  return 0;
}
