#!/usr/bin/env bash
# The clang checks of every source of src/ and port/, in one pass:
#  - the 32-bit narrowing check (issue 18): compiled for armhf, where size_t
#    and long are 32 bits, with -Wshorten-64-to-32 as an error, so that no
#    64-bit file offset, size or count is narrowed without a cast (and a
#    comment saying why it fits);
#  - the lock annotations (port/thread_annotations.h, port/mutex.h) with
#    -Wthread-safety as an error (the analysis does not depend on the
#    target; `make thread-safety` runs this script too).
# Compiled at -O0 into build-narrowing/obj (never linked) through ccache when
# it is installed, so that a rerun over unchanged sources costs lookups
# only (-fsyntax-only would be uncacheable). Needs clang and the armhf cross
# headers (make narrowing installs both).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-narrowing -DEDDY_BUILD_TESTS=OFF >/dev/null  # for build-narrowing/generated (version.h)
mkdir -p build-narrowing/obj
mapfile -t files < <(ls src/*/*.cc src/protocol/generated/*.cc port/*.cc)
launcher=""
if command -v ccache >/dev/null && [ -n "${HOME:-}${CCACHE_DIR:-}" ]; then
  launcher="ccache"
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
fi
export launcher
printf '%s\n' "${files[@]}" | xargs -P"${JOBS:-2}" -I{} sh -c '
  f="$1"; out="build-narrowing/obj/$(echo "$f" | tr / _).o"
  exec $launcher clang++ --target=arm-linux-gnueabihf -std=c++20 -O0 -c -o "$out" \
    -D_FILE_OFFSET_BITS=64 -D_TIME_BITS=64 -I. -Isrc -Ibuild-narrowing/generated \
    -Werror=shorten-64-to-32 -Wthread-safety -Werror=thread-safety "$f"' sh {}
echo "narrowing and thread safety: ${#files[@]} sources for armhf, no implicit 64-to-32-bit conversion, no lock" \
     "annotation broken"
