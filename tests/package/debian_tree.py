"""A minimal Debian 12 tree for the package test: `debootstrap
--variant=minbase bookworm` with the packages eddy's package depends on
(dpkg -i installs no dependencies), cached as a tarball in
$EDDY_TEST_CACHE/debootstrap/ (default ~/.cache/eddy-test), so that a rerun
unpacks it in seconds instead of downloading it again.

The cache key is what decides the tree's content: suite, variant,
architecture, mirror and the sorted list of extra packages (LAYOUT names
this file's way of making it; bump it when that changes). A tarball is
written under a temporary name and renamed, so an interrupted run leaves
no half tarball behind."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile

SUITE = "bookworm"
VARIANT = "minbase"
LAYOUT = 1


def mirror():
    return os.environ.get("EDDY_DEBIAN_MIRROR", "http://deb.debian.org/debian")


def cache_dir():
    base = os.environ.get("EDDY_TEST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "eddy-test")
    return os.path.join(base, "debootstrap")


def cache_key(arch, packages):
    what = {"suite": SUITE, "variant": VARIANT, "arch": arch, "mirror": mirror(),
            "include": sorted(set(packages)), "layout": LAYOUT}
    digest = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]
    return "%s-%s-%s-%s" % (SUITE, VARIANT, arch, digest)


def debootstrap(target, arch, packages):
    subprocess.run(["debootstrap", "--variant=" + VARIANT, "--arch=" + arch,
                    "--include=" + ",".join(sorted(set(packages))), SUITE, target, mirror()],
                   check=True, stdout=subprocess.DEVNULL)
    # Downloaded .debs are not part of the tree; they would double the tarball.
    archives = os.path.join(target, "var", "cache", "apt", "archives")
    for name in os.listdir(archives):
        if name.endswith(".deb"):
            os.remove(os.path.join(archives, name))


def make_tree(target, arch, packages, log=print):
    """Fills the empty directory target with the tree; returns "cached" or
    "debootstrap" (how it was made)."""
    key = cache_key(arch, packages)
    tarball = os.path.join(cache_dir(), key + ".tar.gz")
    if os.path.exists(tarball):
        log("debian tree: unpacking %s" % tarball)
        subprocess.run(["tar", "-xzf", tarball, "--numeric-owner", "-C", target], check=True)
        return "cached"
    log("debian tree: debootstrap %s %s %s (not cached: %s)" % (VARIANT, SUITE, arch, key))
    debootstrap(target, arch, packages)
    os.makedirs(cache_dir(), exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=cache_dir(), prefix=key, suffix=".partial")
    os.close(fd)
    try:
        subprocess.run(["tar", "-czf", partial, "--numeric-owner", "-C", target, "."], check=True)
        os.rename(partial, tarball)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    log("debian tree: cached as %s (%.0f MiB)" % (tarball, os.path.getsize(tarball) / 1048576.0))
    return "debootstrap"


def remove_tree(target):
    shutil.rmtree(target, ignore_errors=True)
