#!/bin/sh
# Storage benchmark: Eddy's append path against fio with the same sync
# behaviour on the same directory in the same run, recovery time after
# SIGKILL with 1 GiB in a partition, index memory per GiB of log.
#
#   tests/bench/storage_bench.sh [BUILD_DIR [WORK_DIR [bench flags...]]]
#
# BUILD_DIR (default build-bench) is configured Release and the
# eddy_storage_bench target built when the binary is missing. WORK_DIR
# (default BUILD_DIR/storage-bench-data) must lie on the filesystem to
# measure; it needs about 3 GiB free. Bench flags: --size-mb N (page-cache
# runs, default 256), --sync-size-mb N (default 64), --recovery-mb N (1024),
# --segment-mb N (64), --phases page-cache,group-commit,per-batch,recovery,
# --repeat N.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build-bench}
work=${2:-$build/storage-bench-data}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift

if ! command -v fio >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y fio >/dev/null || echo "storage_bench: cannot install fio; figures without ratios" >&2
  else
    echo "storage_bench: fio missing and not root; run 'apt-get install fio' for ratios" >&2
  fi
fi

bin=$build/tests/bench/eddy_storage_bench
if [ ! -x "$bin" ]; then
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target eddy_storage_bench -j2
fi

mkdir -p "$work"
status=0
"$bin" --dir "$work" --fio "$(command -v fio || echo fio)" "$@" || status=$?
rm -rf "$work"
exit $status
