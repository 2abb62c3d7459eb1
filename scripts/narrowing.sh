#!/usr/bin/env bash
# The 32-bit narrowing check (issue 18): every source of src/ and port/
# compiled for armhf, where size_t and long are 32 bits, by clang with
# -Wshorten-64-to-32 as an error, so that no 64-bit file offset, size or
# count is narrowed without a cast (and a comment saying why it fits).
# Syntax only: nothing is linked. Needs clang and the armhf cross headers
# (make narrowing installs both).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-narrowing -DEDDY_BUILD_TESTS=OFF >/dev/null  # for build-narrowing/generated (version.h)
mapfile -t files < <(ls src/*/*.cc src/protocol/generated/*.cc port/*.cc)
printf '%s\n' "${files[@]}" | xargs -P"${JOBS:-2}" -I{} clang++ --target=arm-linux-gnueabihf -std=c++20 \
  -fsyntax-only -D_FILE_OFFSET_BITS=64 -D_TIME_BITS=64 -I. -Isrc -Ibuild-narrowing/generated \
  -Werror=shorten-64-to-32 {}
echo "narrowing: ${#files[@]} sources for armhf, no implicit 64-to-32-bit conversion"
