// eddy-power-cut: a test-only eddy for the fault runs (tests/bench/
// replication_faults.py). It is eddy's own main (app::run_cli, the same
// code as src/app/main.cc) with the storage room's PowerCutFilesystem
// (tests/unit/storage/power_cut_filesystem.h) installed over the data
// directory before anything opens a file: every write, preallocation,
// truncation and directory change under log.dirs that no fdatasync or
// directory sync covered yet is recorded. SIGUSR1 is the power cut: a thread
// waiting for it stops every file operation of the process (the one in
// progress finishes first; every later one blocks for good) at a moment
// when some file holds a write not yet synced (it waits up to 1 s for one:
// with acks=all waiting for the disk the data is synced within milliseconds
// of its write, and a cut between those moments is the one that can take
// something), undoes at random what no sync covered (PowerCutFilesystem::
// cut: per 512-byte sector some prefix of its unsynced write history is
// kept, sizes and directory changes fall back) and ends the process at once
// with _exit(86), without running anything else. Start it again on what is
// left: that is the machine after the power came back.
//
// What is not modelled: the SQLite databases (eddy.db), which SQLite writes
// through its own VFS, not the port layer: they keep every write, synced or
// not (one of the outcomes a real cut allows, not all of them). Between the
// cut and _exit (a few milliseconds) the process's other threads may still
// read the files (a Fetch served from the page cache) and see undone bytes;
// they cannot change them.
//
// Environment: EDDY_POWER_CUT_SEED (the cut's random choices; default: from
// std::random_device, printed), EDDY_POWER_CUT_UNDO and
// EDDY_POWER_CUT_DIRECTORY_UNDO (the chance each unsynced sector, and each
// unsynced directory change, is lost; default: drawn uniformly in [0, 1] at
// each cut, as the unit power-cut tests do). Anything but `serve` (and a
// serve whose configuration does not load) runs exactly as eddy does.
//
// Built with the tests only (tests/integration/CMakeLists.txt), never
// installed or packaged.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <chrono>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "app/broker_config.h"
#include "app/cli.h"
#include "port/file_interceptor.h"
#include "tests/unit/storage/power_cut_filesystem.h"

namespace {

using eddy::storage::testing::PowerCutFilesystem;

// The exit code of a process whose power was cut (the bench expects it).
constexpr int kExitPowerCut = 86;

// The PowerCutFilesystem behind a switch: every intercepted operation holds
// the switch from before() to after(); hold() takes it (no operation is in
// progress then, none starts), release() gives it back. The cut keeps it
// for good, so that no file operation runs once the cut begins (none fails
// with EIO and makes the broker log or act on it before _exit).
class PowerSwitch : public eddy::port::FileInterceptor {
 public:
  explicit PowerSwitch(PowerCutFilesystem* disk) : disk_(disk) {}
  void lock() override {
    switch_.lock();
    disk_->lock();
  }
  void unlock() override {
    disk_->unlock();
    switch_.unlock();
  }
  std::error_code before(const eddy::port::FileEvent& event) override { return disk_->before(event); }
  void after(const eddy::port::FileEvent& event, const std::error_code& result) override {
    using eddy::port::FileOp;
    if (!result && (event.op == FileOp::kWrite || event.op == FileOp::kTruncate)) unsynced_fds_.insert(event.fd);
    if (!result && event.op == FileOp::kSyncData) unsynced_fds_.erase(event.fd);
    disk_->after(event, result);
  }
  void hold() { switch_.lock(); }
  void release() { switch_.unlock(); }
  // Whether some file descriptor wrote since its last fdatasync (a closed
  // one too). REQUIRES hold().
  bool unsynced() const { return !unsynced_fds_.empty(); }

 private:
  PowerCutFilesystem* disk_;
  std::mutex switch_;
  std::set<int> unsynced_fds_;  // guarded by switch_
};

// The data directory `eddy serve ARGS` will use (log.dirs, trailing slashes
// dropped); empty when args are not a serve whose configuration loads.
std::string data_directory(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "serve") return "";
  std::string config_path;
  std::vector<std::string> overrides;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--override" && i + 1 < argc) {
      overrides.push_back(argv[++i]);
    } else if (a.rfind("--override=", 0) == 0) {
      overrides.push_back(a.substr(11));
    } else if (!a.empty() && a[0] != '-' && config_path.empty()) {
      config_path = a;
    } else {
      return "";  // run_serve reports it
    }
  }
  eddy::app::Config config(&eddy::app::broker_schema());
  std::vector<std::string> warnings;
  if (!eddy::app::load_broker_config(config_path, overrides, &config, &warnings).ok()) return "";
  std::string dir = config.get_string("log.dirs");
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

double env_probability(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return -1;
  return std::strtod(v, nullptr);
}

void say(const char* text) {
  for (size_t done = 0, n = std::strlen(text); done < n;) {
    ssize_t w = ::write(2, text + done, n - done);
    if (w <= 0) return;
    done += static_cast<size_t>(w);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = data_directory(argc, argv);
  if (root.empty()) return eddy::app::run_cli(argc, argv);

  uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("EDDY_POWER_CUT_SEED"); s != nullptr && *s != '\0') seed = std::strtoull(s, nullptr, 10);
  // Alive until _exit (never destroyed: a thread may be inside it).
  auto* disk = new PowerCutFilesystem(root, root + ".power-cut-stash");
  auto* power = new PowerSwitch(disk);
  eddy::port::set_file_interceptor(power);

  // SIGUSR1 is blocked before any other thread exists, so that every thread
  // eddy starts inherits the mask and only the waiting thread below takes
  // it; that thread blocks every signal (SIGTERM and SIGINT are for eddy's
  // own waiting thread, which blocks them only later).
  sigset_t usr1, all, before;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  std::thread([usr1, seed, disk, power] {
    int sig = 0;
    while (sigwait(&usr1, &sig) != 0) {
    }
    // The moment: some write not yet synced, or 1 s passed.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (;;) {
      power->hold();
      if (power->unsynced() || std::chrono::steady_clock::now() >= give_up) break;
      power->release();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> share(0, 1);
    double undo = env_probability("EDDY_POWER_CUT_UNDO");
    double directory_undo = env_probability("EDDY_POWER_CUT_DIRECTORY_UNDO");
    if (undo < 0) undo = share(rng);
    if (directory_undo < 0) directory_undo = share(rng);
    const PowerCutFilesystem::CutStats stats = disk->cut(rng, undo, directory_undo);
    char line[512];
    std::snprintf(line, sizeof(line),
                  "eddy-power-cut: POWER CUT (seed %llu, undo %.2f, directory undo %.2f): %llu unsynced sectors "
                  "undone, %llu kept, %llu files shortened, %llu directory changes undone, %llu kept (of %llu "
                  "writes and %llu fdatasyncs since the start)\n",
                  static_cast<unsigned long long>(seed), undo, directory_undo,
                  static_cast<unsigned long long>(stats.sectors_undone),
                  static_cast<unsigned long long>(stats.sectors_kept),
                  static_cast<unsigned long long>(stats.files_shortened),
                  static_cast<unsigned long long>(stats.directory_changes_undone),
                  static_cast<unsigned long long>(stats.directory_changes_kept),
                  static_cast<unsigned long long>(disk->writes()), static_cast<unsigned long long>(disk->syncs()));
    say(line);
    ::_exit(kExitPowerCut);
  }).detach();
  sigaddset(&before, SIGUSR1);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  std::fprintf(stderr,
               "eddy-power-cut: recording unsynced writes under %s (seed %llu); SIGUSR1 cuts the power\n",
               root.c_str(), static_cast<unsigned long long>(seed));
  return eddy::app::run_cli(argc, argv);
}
