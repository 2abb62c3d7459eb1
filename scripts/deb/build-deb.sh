#!/usr/bin/env bash
# Builds the eddy Debian package from a built eddy binary, as `make deb`
# calls it:
#   scripts/deb/build-deb.sh ARCH BINARY OUTDIR [VERSION]
# ARCH is Debian's name (amd64, arm64, armhf) and must match BINARY. VERSION
# defaults to what `eddy --version` says, which must then be the top entry
# of scripts/deb/changelog; another VERSION (a local or test build, newer
# than that entry) gets a changelog entry of its own, as `dch --local`
# would add. The package is staged in a temporary tree and built with
# `dpkg-deb --build --root-owner-group` into OUTDIR/eddy_VERSION_ARCH.deb;
# the path is printed. Running eddy for its version and help (the man page)
# goes through qemu-user for the ARM packages.
set -euo pipefail
umask 022

[ $# -ge 3 ] || { echo "usage: build-deb.sh amd64|arm64|armhf BINARY OUTDIR [VERSION]" >&2; exit 2; }
arch=$1 binary=$2 outdir=$3 version=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
maintainer="Eddy maintainers <maintainers@users.noreply.a-seed-b1110516.example>"

case "$arch" in
  amd64) triple=x86_64-linux-gnu; emulator=""; file_arch="x86-64" ;;
  arm64) triple=aarch64-linux-gnu; emulator="qemu-aarch64"; file_arch="ARM aarch64" ;;
  armhf) triple=arm-linux-gnueabihf; emulator="qemu-arm"; file_arch="ARM, EABI5" ;;
  *) echo "build-deb: ARCH must be amd64, arm64 or armhf, not '$arch'" >&2; exit 2 ;;
esac
[ "$arch" = "$(dpkg --print-architecture)" ] && emulator=""
strip_tool="$triple-strip"
command -v "$strip_tool" >/dev/null || strip_tool=strip
if ! file -b "$binary" | grep -q "$file_arch"; then
  echo "build-deb: $binary is not an $arch binary: $(file -b "$binary")" >&2
  exit 2
fi

upstream=$($emulator "$binary" --version | sed -n 's/^eddy \([^ ]*\)$/\1/p')
[ -n "$upstream" ] || { echo "build-deb: '$binary --version' did not print 'eddy VERSION'" >&2; exit 1; }
top=$(dpkg-parsechangelog -l "$here/changelog" -S Version)
version=${version:-$upstream}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# debian/eddy under a directory with debian/control: where dpkg-shlibdeps
# expects a package's files.
root="$stage/debian/eddy"
doc="$root/usr/share/doc/eddy"
install -d "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/eddy" \
  "$root/usr/share/man/man1" "$doc/examples"

# The changelog: scripts/deb/changelog, with an entry for VERSION first when
# it is not the top one.
if [ "$version" != "$top" ]; then
  if ! dpkg --compare-versions "$version" gt "$top"; then
    echo "build-deb: version $version is not newer than $top, the top of scripts/deb/changelog" >&2
    exit 2
  fi
  { printf 'eddy (%s) bookworm; urgency=medium\n\n' "$version"
    printf '  * Local build of eddy %s.\n\n' "$upstream"
    printf ' -- %s  %s\n\n' "$maintainer" "$(date -R)"
    cat "$here/changelog"; } > "$stage/changelog"
elif [ "$upstream" != "$top" ]; then
  echo "build-deb: eddy --version says $upstream, scripts/deb/changelog's top entry is $top: add an entry" >&2
  exit 2
else
  cp "$here/changelog" "$stage/changelog"
fi
# Every file's mtime, and the man page's date, come from the changelog
# (dpkg-deb clamps mtimes to SOURCE_DATE_EPOCH): the same inputs give the
# same package.
export SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l "$stage/changelog" -S Timestamp)
gzip -9n < "$stage/changelog" > "$doc/changelog.gz"

# As dh_strip does: no symbols, no .comment/.note sections.
install -m 0755 "$binary" "$root/usr/bin/eddy"
"$strip_tool" --remove-section=.comment --remove-section=.note --strip-unneeded "$root/usr/bin/eddy"

install -m 0644 "$here/eddy.service" "$root/lib/systemd/system/eddy.service"
/usr/bin/python3 "$here/system-config.py" "$src/config/gateway.properties" "$root/etc/eddy/eddy.properties"
chmod 0644 "$root/etc/eddy/eddy.properties"
/usr/bin/python3 "$here/eddy-man.py" --eddy "$emulator $root/usr/bin/eddy" --version "$upstream" \
  --date "$(date -u -d "@$SOURCE_DATE_EPOCH" +%F)" --output "$stage/eddy.1"
gzip -9n < "$stage/eddy.1" > "$root/usr/share/man/man1/eddy.1.gz"
install -m 0644 "$here/copyright" "$doc/copyright"
install -m 0644 "$src/examples/forwarding-gateway.properties" "$doc/examples/forwarding-gateway.properties"

for script in postinst prerm postrm; do
  install -m 0755 "$here/$script" "$root/DEBIAN/$script"
done
echo /etc/eddy/eddy.properties > "$root/DEBIAN/conffiles"
(cd "$root" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | LC_ALL=C sort -z \
  | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"

# Shared libraries the binary needs, as dpkg-shlibdeps computes them from
# the installed packages of ARCH (multiarch for the ARM ones).
printf 'Source: eddy\n\nPackage: eddy\nArchitecture: any\n' > "$stage/debian/control"
shlibs=$(cd "$stage" && DEB_HOST_ARCH="$arch" dpkg-shlibdeps -O -edebian/eddy/usr/bin/eddy \
  | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "build-deb: dpkg-shlibdeps found no libraries for $binary" >&2; exit 1; }

# Installed-Size as dpkg-gencontrol counts it: KiB per file, rounded up,
# and 1 for each directory.
installed_kib=$(cd "$root" && find . -path ./DEBIAN -prune -o ! -path . -printf '%y %s\n' \
  | awk '{ kib += ($1 == "f") ? int(($2 + 1023) / 1024) : 1 } END { print kib }')

cat > "$root/DEBIAN/control" <<CONTROL
Package: eddy
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_kib
Depends: adduser, $shlibs
Section: net
Priority: optional
Description: Kafka-protocol message broker for gateway devices
 Eddy is a small single-process message broker for gateway devices
 (Raspberry-Pi-class boards, industrial PCs) that speaks the Apache Kafka
 wire protocol: sensors and local applications produce and consume with
 any Kafka client, the data is kept on a bounded, preallocated disk
 budget, and store-and-forward links send it on to a central Kafka
 cluster when the uplink is back.
 .
 This package runs it as the systemd service eddy.service, as the system
 user eddy, with its configuration in /etc/eddy/eddy.properties and its
 data in /var/lib/eddy.
CONTROL

mkdir -p "$outdir"
deb="$outdir/eddy_${version}_${arch}.deb"
dpkg-deb --build --root-owner-group -Zxz "$root" "$deb" >/dev/null
echo "$deb"
