# The front door. Everything real happens in CMake; this file only chains
# "install what is missing", "configure", "build" and "run/test".
#
#   make run               set up, build (Release), start eddy on config/gateway.properties
#   make test              set up, build, run the whole test suite (ctest)
#   make cross ARCH=...    cross-build for aarch64 or armhf, run the unit tests under qemu
#   make deb ARCH=...      Debian package of the gateway build for amd64, arm64 or armhf (in build-deb/)
#   make package-test      the three packages: lintian, qemu, install/upgrade/remove in a Debian 12 tree, booted with systemd
#   make size              stripped size of eddy (gateway build) for the host and each ARM build
#   make asan              unit tests under AddressSanitizer + UBSan (clang, build-fuzz)
#   make fuzz              build the libFuzzer targets with clang and run each for FUZZ_SECONDS
#   make fuzz-long         fuzz_live_broker (a real broker behind a connection) for FUZZ_RUNS (10^7) executions
#   make narrowing         every source compiled by clang for armhf (32-bit size_t) with -Wshorten-64-to-32 and
#                          -Wthread-safety (the lock annotations) as errors
#   make thread-safety     the same as make narrowing
#   make power-cuts        100 000 simulated power cuts of a partition log, 20 000 of eddy.db and forward.db (make test runs 1 000 each),
#                          10 000 of a whole gateway: logs, eddy.db and forward.db with a forwarding link (make test runs 200)
#   make bench             Eddy vs Apache Kafka vs NATS JetStream vs hardware limits (fio, iperf3, sendfile), and the gateway
#                          build (-Os) next to Release on the same figures; reports in build/bench-report
#   make soak              memory figures, then 1 000 connections through a cutting proxy for 30 min (SOAK_FLAGS); RSS per minute, nothing lost

BUILD_DIR    ?= build
CONFIG       ?= config/gateway.properties
JOBS         ?= $(shell nproc)
ARCH         ?= aarch64
FUZZ_SECONDS ?= 60

DEB_OUT      ?= build-deb
DEB_VERSION  ?=
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# ARCH names a toolchain for make cross (aarch64, armhf) and a Debian
# architecture for make deb (amd64, arm64, armhf); arm64 and aarch64 are the
# same toolchain, build-aarch64. make deb without ARCH builds for the host.
ifeq ($(origin ARCH),file)
  DEB_ARCH := $(shell dpkg --print-architecture)
endif
ifneq ($(filter $(ARCH),aarch64 arm64),)
  CROSS_ARCH := aarch64
  TRIPLE := aarch64-linux-gnu
  DEB_ARCH ?= arm64
else ifeq ($(ARCH),armhf)
  CROSS_ARCH := armhf
  TRIPLE := arm-linux-gnueabihf
  DEB_ARCH ?= armhf
else ifeq ($(ARCH),amd64)
  DEB_ARCH ?= amd64
else
  $(error ARCH must be aarch64 (or arm64), armhf, or amd64 for make deb)
endif
# The package's binary: the host's gateway build is build-size's (make
# size), an ARM one the cross build's (make cross), configured as they do.
ifeq ($(DEB_ARCH),$(shell dpkg --print-architecture))
  DEB_BUILD := build-size
  DEB_CMAKE := -DEDDY_BUILD_TESTS=OFF
else
  DEB_BUILD := build-$(CROSS_ARCH)
  DEB_CMAKE := -DCMAKE_TOOLCHAIN_FILE=toolchains/$(TRIPLE).cmake
endif

.PHONY: deps build run test cross deb package-test size asan fuzz fuzz-long thread-safety narrowing power-cuts bench soak quorum-faults replication-faults replication-bench clean

deps:
	@scripts/install-deps.sh host

build: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD_DIR) -j$(JOBS)

run: build
	$(BUILD_DIR)/eddy serve $(CONFIG)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

# Under qemu the randomized tests run fewer cuts and seeds than on the host
# (which runs 1 000 of each): they check the ARM build, whose code paths are
# the host's, at a fifth of the emulated time.
CROSS_POWER_CUTS ?= 200
CROSS_SIM_RUNS ?= 200
cross:
	@[ -n "$(CROSS_ARCH)" ] || { echo "make cross: ARCH must be aarch64 (or arm64) or armhf" >&2; exit 2; }
	@scripts/install-deps.sh cross $(CROSS_ARCH)
	@cmake -S . -B build-$(CROSS_ARCH) -DCMAKE_TOOLCHAIN_FILE=toolchains/$(TRIPLE).cmake \
	  -DCMAKE_BUILD_TYPE=Release -DEDDY_GATEWAY_SIZE=ON >/dev/null
	@cmake --build build-$(CROSS_ARCH) -j$(JOBS)
	cd build-$(CROSS_ARCH) && EDDY_POWER_CUTS=$(CROSS_POWER_CUTS) EDDY_RAFT_SIM_RUNS=$(CROSS_SIM_RUNS) \
	  ctest -L unit --output-on-failure -j$(JOBS)

# build-deb/eddy_VERSION_ARCH.deb (scripts/deb/build-deb.sh); only the eddy
# target is built. DEB_VERSION overrides the version (a local build).
deb:
	@scripts/install-deps.sh deb $(DEB_ARCH)
	@cmake --no-warn-unused-cli -S . -B $(DEB_BUILD) $(DEB_CMAKE) -DCMAKE_BUILD_TYPE=Release -DEDDY_GATEWAY_SIZE=ON >/dev/null
	@cmake --build $(DEB_BUILD) -j$(JOBS) --target eddy
	@scripts/deb/build-deb.sh $(DEB_ARCH) $(DEB_BUILD)/eddy $(DEB_OUT) $(DEB_VERSION)

# The packages for all three architectures, then tests/package/package_test.py
# (as root: chroot and systemd-nspawn; the Debian 12 tree is cached in
# ~/.cache/eddy-test).
package-test:
	@scripts/install-deps.sh package-test
	@rm -f $(DEB_OUT)/eddy_*.deb
	@$(MAKE) --no-print-directory deb ARCH=amd64
	@$(MAKE) --no-print-directory deb ARCH=arm64
	@$(MAKE) --no-print-directory deb ARCH=armhf
	$(SUDO) /usr/bin/python3 tests/package/package_test.py --debs $(DEB_OUT) --binary build-size/eddy

size: deps
	@cmake -S . -B build-size -DCMAKE_BUILD_TYPE=Release -DEDDY_GATEWAY_SIZE=ON -DEDDY_BUILD_TESTS=OFF >/dev/null
	@cmake --build build-size --target eddy -j$(JOBS) >/dev/null
	@scripts/print-size.sh build-size/eddy build-aarch64/eddy build-armhf/eddy

# The unit tests under ASan+UBSan are built in the fuzz build (clang), which
# compiles every room with both sanitizers already: one sanitized build of
# the sources, not two (a gcc build with -DEDDY_SANITIZE=ON is the other
# way, by hand).
FUZZ_CONFIGURE = CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDDY_FUZZ=ON \
	  -DEDDY_SYSTEM_GTEST=OFF -DEDDY_FUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null

asan: deps
	@scripts/install-deps.sh fuzz
	@$(FUZZ_CONFIGURE)
	@cmake --build build-fuzz -j$(JOBS) --target eddy_unit_tests
	cd build-fuzz && ctest -L unit --output-on-failure -j$(JOBS)

fuzz: deps
	@scripts/install-deps.sh fuzz
	@$(FUZZ_CONFIGURE)
	@cmake --build build-fuzz -j$(JOBS) --target fuzz_request_decoder fuzz_response_decoder fuzz_record_validator fuzz_sasl \
	  fuzz_live_broker
	cd build-fuzz && ctest -L fuzz --output-on-failure -j$(JOBS)

# The bench run of the live-broker fuzzer: FUZZ_RUNS executions (hours on
# 2 cores) on the corpus make fuzz keeps (ctest label "soak").
FUZZ_RUNS ?= 10000000
fuzz-long: deps
	@scripts/install-deps.sh fuzz
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDDY_FUZZ=ON \
	  -DEDDY_SYSTEM_GTEST=OFF -DEDDY_FUZZ_RUNS=$(FUZZ_RUNS) >/dev/null
	@cmake --build build-fuzz -j$(JOBS) --target fuzz_live_broker
	cd build-fuzz && ctest -L soak --output-on-failure

# The lock annotations (port/thread_annotations.h, port/mutex.h) checked by
# clang's -Wthread-safety as errors: scripts/narrowing.sh, which checks them
# in the same pass as the 32-bit narrowing (a build with the analysis:
# cmake -DEDDY_THREAD_SAFETY=ON with CC=clang CXX=clang++).
thread-safety: narrowing

# tests/unit/storage/power_cut_test.cc with POWER_CUTS cuts (about 5 ms each),
# then tests/unit/meta/meta_power_cut_test.cc (the SQLite databases) with
# META_POWER_CUTS (about 11 ms each), then tests/unit/broker/forward_power_cut_test.cc
# (logs, eddy.db and forward.db of one gateway with a forwarding link) with
# FORWARD_POWER_CUTS (about 18 ms each in a Debug build); POWER_CUT_SEED replays a run of any.
POWER_CUTS ?= 100000
META_POWER_CUTS ?= 20000
FORWARD_POWER_CUTS ?= 10000
narrowing: deps
	@scripts/install-deps.sh fuzz
	@scripts/install-deps.sh cross armhf
	@JOBS=$(JOBS) scripts/narrowing.sh

power-cuts: build
	EDDY_POWER_CUTS=$(POWER_CUTS) EDDY_POWER_CUT_SEED=$(POWER_CUT_SEED) $(BUILD_DIR)/tests/unit/storage/storage_power_cut_test
	EDDY_POWER_CUTS=$(META_POWER_CUTS) EDDY_POWER_CUT_SEED=$(POWER_CUT_SEED) $(BUILD_DIR)/tests/unit/meta/meta_power_cut_test
	EDDY_POWER_CUTS=$(FORWARD_POWER_CUTS) EDDY_POWER_CUT_SEED=$(POWER_CUT_SEED) $(BUILD_DIR)/tests/unit/broker/broker_forward_power_cut_test

# Eddy next to Apache Kafka (one KRaft node; its jars come from Maven Central
# into ~/.cache/eddy-test on first use, via tests/integration/kafka_fixture.py),
# NATS JetStream and the hardware limits (fio, iperf3, sendfile), measured in
# one run; report in $(BUILD_DIR)/bench-report/. The bench clients need
# libnats-dev, which the bench deps bring: configure again so that CMake
# finds it. BENCH_FLAGS passes options to compare_bench.py
# (e.g. BENCH_FLAGS="--consume-mib 256 --runs 5", or "--peers jetstream").
# Then TLS: handshakes per second and consume over SSL vs PLAINTEXT, Eddy vs
# Kafka vs openssl s_server (tests/bench/tls_bench.py; TLS_BENCH_FLAGS, e.g.
# "--no-kafka"); report in $(BUILD_DIR)/bench-report/tls.md.
# Last the metrics listener's cost (tests/bench/metrics_cost.py): idle RSS
# and CPU over METRICS_IDLE_SECONDS with and without it, scrape wall time;
# report in $(BUILD_DIR)/bench-report/metrics_cost.md.
METRICS_IDLE_SECONDS ?= 20
bench: build
	@scripts/install-deps.sh bench
	@cmake -S . -B $(BUILD_DIR) >/dev/null
	@cmake --build $(BUILD_DIR) -j$(JOBS) --target eddy rdkafka_bench nats_bench eddy_record_validation_bench copy_floor raw_fetch raw_e2e sync_floor
	/usr/bin/python3 tests/bench/compare_bench.py --build $(BUILD_DIR) $(BENCH_FLAGS)
	@cmake -S . -B build-size -DCMAKE_BUILD_TYPE=Release -DEDDY_GATEWAY_SIZE=ON -DEDDY_BUILD_TESTS=OFF >/dev/null
	@cmake --build build-size --target eddy -j$(JOBS) >/dev/null
	/usr/bin/python3 tests/bench/gateway_build_bench.py --build $(BUILD_DIR) --gateway-build build-size
	/usr/bin/python3 tests/bench/tls_bench.py --build $(BUILD_DIR) $(TLS_BENCH_FLAGS)
	/usr/bin/python3 tests/bench/metrics_cost.py --build $(BUILD_DIR) --idle-seconds $(METRICS_IDLE_SECONDS)

# The soak (tests/bench/soak_bench.py): memory figures of an idle broker, then
# 1 000 connections producing and fetching through a proxy that cuts them,
# for 30 minutes; RSS per minute and every acknowledged record read back.
# SOAK_FLAGS, e.g. "--minutes 5 --connections 200"; report in
# $(BUILD_DIR)/bench-report/soak.md.
SOAK_FLAGS ?= --minutes 30
soak: build
	/usr/bin/python3 tests/bench/soak_bench.py --build $(BUILD_DIR) $(SOAK_FLAGS)

# Faults on purpose against a 3-node cluster's controller quorum
# (tests/bench/quorum_faults.py): kills, pauses, restarts, wiped disks for
# QUORUM_FLAGS (default 10 minutes); checks one leader per epoch, leader
# completeness and convergence. test_cluster_quorum.py is the short run.
QUORUM_FLAGS ?= --minutes 10
quorum-faults: build
	EDDY_BIN=$(BUILD_DIR)/eddy EDDY_SOURCE_DIR=. /usr/bin/python3 tests/bench/quorum_faults.py $(QUORUM_FLAGS)

# Faults on purpose against replicated partitions
# (tests/bench/replication_faults.py): a topic of 3 partitions with
# replication factor 3 on a 3-node cluster, an idempotent acks=all producer
# and a group consumer (confluent-kafka, from PyPI into the test cache)
# through leader kills, pauses, follower kills, wiped disks, SIGTERMs,
# isolated leaders and followers and power cuts (the nodes run the test-only
# eddy-power-cut) for REPLICATION_FLAGS (default 10 minutes, e.g. "--minutes
# 5 --seed 7 --kill-every 15 --messages 100000 --faults kill_leader"); checks
# every acknowledged message once and in order, no duplicates, consumers
# never going back, byte-identical replicas; prints failover times.
# test_cluster_replication_faults.py is the short run.
REPLICATION_FLAGS ?= --minutes 10
replication-faults: build
	EDDY_BIN=$(BUILD_DIR)/eddy EDDY_POWER_CUT_BIN=$(BUILD_DIR)/tests/integration/eddy-power-cut EDDY_SOURCE_DIR=. \
	  /usr/bin/python3 tests/bench/replication_faults.py $(REPLICATION_FLAGS)

# Replicated partitions against unreplicated ones on a 3-node cluster on one
# machine (tests/bench/replication_bench.py): produce MiB/s and acks=all
# latency with RF=3 and RF=1 in the same run, each node's RSS, the failover
# gap seen by a librdkafka producer and by Kafka's Java producer.
replication-bench: build
	@cmake --build $(BUILD_DIR) -j$(JOBS) --target eddy rdkafka_bench
	cd $(BUILD_DIR) && EDDY_BIN=./eddy EDDY_SOURCE_DIR=.. /usr/bin/python3 ../tests/bench/replication_bench.py

clean:
	rm -rf build build-aarch64 build-armhf build-size build-asan build-fuzz build-thread-safety build-narrowing build-deb
