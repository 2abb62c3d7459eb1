# The front door. Everything real happens in CMake; this file only chains
# "install what is missing", "configure", "build" and "run/test".
#
#   make run               set up, build (Release), start eddy on config/gateway.properties
#   make test              set up, build, run the whole test suite (ctest)
#   make cross ARCH=...    cross-build for aarch64 or armhf, run the unit tests under qemu
#   make size              stripped size of eddy (gateway build) for the host and each ARM build
#   make asan              unit tests under AddressSanitizer + UBSan
#   make fuzz              build the libFuzzer targets with clang and run each for FUZZ_SECONDS
#   make power-cuts        100 000 simulated power cuts of a partition log (make test runs 1 000)
#   make bench             Eddy vs Apache Kafka vs NATS JetStream vs hardware limits (fio, iperf3, sendfile); report in build/bench-report

BUILD_DIR    ?= build
CONFIG       ?= config/gateway.properties
JOBS         ?= $(shell nproc)
ARCH         ?= aarch64
FUZZ_SECONDS ?= 60

ifeq ($(ARCH),aarch64)
  TRIPLE := aarch64-linux-gnu
else ifeq ($(ARCH),armhf)
  TRIPLE := arm-linux-gnueabihf
else
  $(error ARCH must be aarch64 or armhf)
endif

.PHONY: deps build run test cross size asan fuzz power-cuts bench clean

deps:
	@scripts/install-deps.sh host

build: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD_DIR) -j$(JOBS)

run: build
	$(BUILD_DIR)/eddy serve $(CONFIG)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

cross:
	@scripts/install-deps.sh cross $(ARCH)
	@cmake -S . -B build-$(ARCH) -DCMAKE_TOOLCHAIN_FILE=toolchains/$(TRIPLE).cmake \
	  -DCMAKE_BUILD_TYPE=Release -DEDDY_GATEWAY_SIZE=ON >/dev/null
	@cmake --build build-$(ARCH) -j$(JOBS)
	cd build-$(ARCH) && ctest -L unit --output-on-failure -j$(JOBS)

size: deps
	@cmake -S . -B build-size -DCMAKE_BUILD_TYPE=Release -DEDDY_GATEWAY_SIZE=ON -DEDDY_BUILD_TESTS=OFF >/dev/null
	@cmake --build build-size --target eddy -j$(JOBS) >/dev/null
	@scripts/print-size.sh build-size/eddy build-aarch64/eddy build-armhf/eddy

asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDDY_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j$(JOBS)
	cd build-asan && ctest -L unit --output-on-failure -j$(JOBS)

fuzz: deps
	@scripts/install-deps.sh fuzz
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDDY_FUZZ=ON \
	  -DEDDY_SYSTEM_GTEST=OFF -DEDDY_FUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null
	@cmake --build build-fuzz -j$(JOBS) --target fuzz_request_decoder fuzz_response_decoder fuzz_record_validator
	cd build-fuzz && ctest -L fuzz --output-on-failure

# tests/unit/storage/power_cut_test.cc with POWER_CUTS cuts (about 5 ms each);
# POWER_CUT_SEED replays a run.
POWER_CUTS ?= 100000
power-cuts: build
	EDDY_POWER_CUTS=$(POWER_CUTS) EDDY_POWER_CUT_SEED=$(POWER_CUT_SEED) $(BUILD_DIR)/tests/unit/storage/storage_power_cut_test

# Eddy next to Apache Kafka (one KRaft node; its jars come from Maven Central
# into ~/.cache/eddy-test on first use, via tests/integration/kafka_fixture.py),
# NATS JetStream and the hardware limits (fio, iperf3, sendfile), measured in
# one run; report in $(BUILD_DIR)/bench-report/. The bench clients need
# libnats-dev, which the bench deps bring: configure again so that CMake
# finds it. BENCH_FLAGS passes options to compare_bench.py
# (e.g. BENCH_FLAGS="--consume-mib 256 --runs 5", or "--peers jetstream").
bench: build
	@scripts/install-deps.sh bench
	@cmake -S . -B $(BUILD_DIR) >/dev/null
	@cmake --build $(BUILD_DIR) -j$(JOBS) --target eddy rdkafka_bench nats_bench eddy_record_validation_bench
	/usr/bin/python3 tests/bench/compare_bench.py --build $(BUILD_DIR) $(BENCH_FLAGS)

clean:
	rm -rf build build-aarch64 build-armhf build-size build-asan build-fuzz
