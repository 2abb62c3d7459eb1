# The front door. Everything real happens in CMake; this file only chains
# "install what is missing", "configure", "build" and "run/test".
#
#   make run               set up, build (Release), start eddy on config/gateway.properties
#   make test              set up, build, run the whole test suite (ctest)
#   make cross ARCH=...    cross-build for aarch64 or armhf, run the unit tests under qemu
#   make size              stripped size of eddy (gateway build) for the host and each ARM build
#   make asan              unit tests under AddressSanitizer + UBSan
#   make fuzz              build the libFuzzer targets with clang and run each for FUZZ_SECONDS
#   make bench             storage and broker benchmarks, each figure next to a limit measured in the same run

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

.PHONY: deps build run test cross size asan fuzz bench clean

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
	@cmake --build build-fuzz -j$(JOBS) --target fuzz_request_decoder fuzz_response_decoder
	cd build-fuzz && ctest -L fuzz --output-on-failure

bench: build
	@scripts/install-deps.sh bench
	tests/bench/storage_bench.sh $(CURDIR)/$(BUILD_DIR) $(CURDIR)/$(BUILD_DIR)/storage-bench-data
	cd $(BUILD_DIR) && EDDY_BIN=./eddy EDDY_SOURCE_DIR=$(CURDIR) /usr/bin/python3 $(CURDIR)/tests/bench/rdkafka_bench.py
	cd $(BUILD_DIR) && EDDY_BIN=./eddy EDDY_SOURCE_DIR=$(CURDIR) /usr/bin/python3 $(CURDIR)/tests/bench/broker_bench.py

clean:
	rm -rf build build-aarch64 build-armhf build-size build-asan build-fuzz
