#!/usr/bin/env bash
# Prints the stripped size of each eddy binary given that exists.
set -eu
printf '%-24s %-10s %12s\n' "build" "arch" "bytes"
for bin in "$@"; do
  [ -f "$bin" ] || continue
  arch=$(file -b "$bin" 2>/dev/null | sed -n 's/.*, \(x86-64\|ARM aarch64\|ARM\),.*/\1/p')
  tmp=$(mktemp)
  cp "$bin" "$tmp"
  case "$arch" in
    "ARM aarch64") strip_tool=aarch64-linux-gnu-strip ;;
    ARM) strip_tool=arm-linux-gnueabihf-strip ;;
    *) strip_tool=strip ;;
  esac
  command -v "$strip_tool" >/dev/null && "$strip_tool" "$tmp"
  printf '%-24s %-10s %12s\n' "$(dirname "$bin")" "${arch:-unknown}" "$(stat -c %s "$tmp")"
  rm -f "$tmp"
done
