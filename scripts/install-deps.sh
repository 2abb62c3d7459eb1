#!/usr/bin/env bash
# Installs the Debian packages Eddy needs, only those missing; quick and
# silent when everything is present. Uses sudo when not root.
#   scripts/install-deps.sh host            build + test dependencies
#   scripts/install-deps.sh cross aarch64   cross compiler, qemu-user, arm64 -dev packages
#   scripts/install-deps.sh cross armhf
#   scripts/install-deps.sh deb amd64|arm64|armhf   what make deb needs (and the cross set for ARM)
#   scripts/install-deps.sh package-test    make package-test: the three above, lintian, debootstrap, kcat, strace
#   scripts/install-deps.sh fuzz            clang + libFuzzer runtime
#   scripts/install-deps.sh bench           nats-server, libnats-dev, fio, iperf3, gnuplot-nox, liburing-dev
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

missing() {
  local out=() p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then out+=("$p"); fi
  done
  echo "${out[@]:-}"
}

APT_UPDATED=0
apt_install() {
  local want
  want=$(missing "$@")
  [ -z "$want" ] && return 0
  echo "install-deps: installing $want" >&2
  if [ "$APT_UPDATED" = 0 ]; then
    # A mirror in the middle of a sync can fail one index; what is needed
    # may still install from the others, so go on and let install decide.
    $SUDO apt-get update -qq >&2 || echo "install-deps: apt-get update reported errors; trying to install anyway" >&2
    APT_UPDATED=1
  fi
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $want >&2
}

# ccache: CMake compiles through it when present (scripts/ccache.cmake), for
# the host, cross and fuzz builds alike.
# libfmt-dev: only fmt's headers are used, for every target (fmt's compiled
# part is built into eddy, port/fmt.cc), so the cross builds need no
# libfmt-dev:<arch> and the packages no libfmt9.
HOST_BUILD=(cmake make g++ pkg-config file ccache libasio-dev libsqlite3-dev libgtest-dev googletest
  zlib1g-dev liblz4-dev libzstd-dev libsnappy-dev libfmt-dev libmbedtls-dev)
# Real clients for the integration tests (not linked into eddy), which run
# under Debian's python3-pytest (tests/integration/conftest.py); the metrics
# tests parse /metrics with prometheus_client and render the status page in
# headless chromium; the default disk budget's check loop-mounts an ext4
# image (e2fsprogs, mount).
HOST_TEST=(kcat librdkafka-dev python3-kafka python3-lz4 python3-snappy python3-zstandard iproute2 procps strace
  openjdk-17-jdk-headless maven python3-venv python3-prometheus-client chromium python3-pytest e2fsprogs mount)
# Apache Kafka itself (broker, tools, Java clients) comes from Maven Central
# and the newest clients from PyPI, npm and the Go module proxy: the tests
# fetch those into ~/.cache/eddy-test on first use (tests/integration/
# kafka_fixture.py, newest_clients.py).

# make deb: dpkg-shlibdeps (dpkg-dev), the man page generator (python3),
# file(1) to check the binary's architecture.
DEB_BUILD=(dpkg-dev python3 file binutils)
# make package-test: lintian, the Debian 12 tree (debootstrap), chroot
# tools (util-linux's setpriv is essential), kcat as the client, strace for
# the system-call check, systemd-analyze (systemd) for the unit,
# systemd-nspawn (systemd-container) to boot the tree with systemd as PID 1.
PACKAGE_TEST=(lintian debootstrap kcat strace systemd systemd-container qemu-user)

case "${1:-host}" in
  host)
    apt_install "${HOST_BUILD[@]}" "${HOST_TEST[@]}"
    ;;
  cross)
    arch="${2:?usage: install-deps.sh cross aarch64|armhf}"
    case "$arch" in
      aarch64) deb=arm64; triple=aarch64-linux-gnu ;;
      armhf) deb=armhf; triple=arm-linux-gnueabihf ;;
      *) echo "install-deps: unknown ARCH '$arch' (aarch64 or armhf)" >&2; exit 2 ;;
    esac
    apt_install "${HOST_BUILD[@]}" "g++-$triple" qemu-user
    if ! dpkg --print-foreign-architectures | grep -qx "$deb"; then
      echo "install-deps: adding Debian architecture $deb" >&2
      $SUDO dpkg --add-architecture "$deb"
      APT_UPDATED=0
    fi
    apt_install "libsqlite3-dev:$deb" "zlib1g-dev:$deb" "libsnappy-dev:$deb" "liblz4-dev:$deb" \
      "libzstd-dev:$deb" "libmbedtls-dev:$deb"
    ;;
  deb)
    case "${2:-amd64}" in
      amd64) apt_install "${HOST_BUILD[@]}" "${DEB_BUILD[@]}" ;;
      arm64) "$0" cross aarch64; apt_install "${DEB_BUILD[@]}" ;;
      armhf) "$0" cross armhf; apt_install "${DEB_BUILD[@]}" ;;
      *) echo "install-deps: unknown Debian architecture '${2:-}' (amd64, arm64 or armhf)" >&2; exit 2 ;;
    esac
    ;;
  package-test)
    for arch in amd64 arm64 armhf; do "$0" deb "$arch"; done
    apt_install "${PACKAGE_TEST[@]}"
    ;;
  fuzz)
    apt_install clang libclang-rt-14-dev
    ;;
  bench)
    # The peers (NATS JetStream server and C client; Apache Kafka runs on the
    # JDK and Maven of HOST_TEST, its jars fetched on first use), the
    # hardware limits (fio, iperf3), the chart (gnuplot), the Kafka client and
    # io_uring for sync_handoff.c.
    apt_install python3 fio iperf3 nats-server libnats-dev gnuplot-nox librdkafka-dev liburing-dev "${HOST_TEST[@]}"
    ;;
  *)
    echo "usage: install-deps.sh host | cross aarch64|armhf | deb amd64|arm64|armhf | package-test | fuzz | bench" >&2
    exit 2
    ;;
esac
