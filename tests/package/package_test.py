#!/usr/bin/python3
"""The Debian packages of `make deb`, checked as a user would meet them
(make package-test, as root: chroot, debootstrap).

  package_test.py --debs DIR --binary build-size/eddy

- lintian: no error or warning on the amd64, arm64 and armhf packages
  (info tags are printed).
- The ARM packages hold an ARM eddy that runs (`eddy --version` under
  qemu-user) and says the package's version.
- amd64, in a minimal Debian 12 tree (debian_tree.py, cached): dpkg -i
  creates the system user and the data directory and enables the unit;
  eddy started under strace as the unit would start it (unit_runner.py,
  in a chroot) reports READY=1 only when it serves; kcat from the host
  produces and consumes over 127.0.0.1 (the port edited into the
  conffile, as an admin would); the system calls eddy made are all
  allowed by the unit's SystemCallFilter=; systemd-analyze verifies the
  unit.
- Upgrade to a second build with a higher version (dpkg -i over it): no
  conffile prompt, the admin's edit kept, the data directory byte for byte
  unchanged, the messages still there, the log continuing.
- The tree booted with systemd as PID 1 (booted_tree.py, systemd-nspawn):
  eddy.service is started at boot and active only once eddy said READY=1,
  in systemd's sandbox (seccomp filter, no new privileges, no
  capabilities); it serves the messages and takes more; `systemctl
  restart` keeps them; a SIGKILL makes systemd start it again
  (Restart=on-failure); installing the package again restarts the running
  service (what an upgrade does); `systemctl stop` ends it with exit 0.
- dpkg -r keeps the configuration and the data (installing again serves
  the same messages); dpkg -P removes both, keeps the user."""

import argparse
import hashlib
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "integration"))
import eddy_fixture  # noqa: E402 - port_accepts
import booted_tree  # noqa: E402
import debian_tree  # noqa: E402
import unit_runner  # noqa: E402


class Checks:
    """Named checks: check() prints ok/FAIL and counts; finish() prints
    'N passed, N failed' and exits 0 only when nothing failed and at least
    one check ran. (The integration tests run under pytest; this script,
    run by `make package-test` as root against a Debian tree, keeps its
    own small tally.)"""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.started = time.monotonic()

    def check(self, name, condition, detail=""):
        if condition:
            self.passed += 1
            print("ok   %s" % name, flush=True)
        else:
            self.failed += 1
            print("FAIL %s%s" % (name, (": " + str(detail)) if detail != "" else ""), flush=True)
        return bool(condition)

    def equal(self, name, actual, expected):
        if actual == expected:
            return self.check(name, True)
        a, e = repr(actual), repr(expected)
        if len(a) > 300:
            a = a[:300] + "..."
        if len(e) > 300:
            e = e[:300] + "..."
        return self.check(name, False, "got %s, want %s" % (a, e))

    def fail(self, name, detail):
        return self.check(name, False, detail)

    def finish(self):
        print("took %.1f s" % (time.monotonic() - self.started))
        print("%d passed, %d failed" % (self.passed, self.failed), flush=True)
        sys.exit(0 if self.failed == 0 and self.passed > 0 else 1)


def assert_no_closed_connection(broker):
    """The broker closed no client connection for a bad or unsupported
    request. Its log is the only place that says so: no metric counts these
    closes."""
    closed = [line for line in broker.log_text().splitlines() if "closing connection" in line]
    assert closed == [], "broker closed connections as bad requests:\n" + "\n".join(closed)[-3000:]

UNIT = "/lib/systemd/system/eddy.service"
CONF = "/etc/eddy/eddy.properties"
DATA = "/var/lib/eddy"
TOPIC = "package-test"
QEMU = {"arm64": "qemu-aarch64", "armhf": "qemu-arm"}
# In the tree besides eddy's dependencies: systemd, for systemd-analyze
# verify, the targets the unit names, and PID 1 of the booted tree.
TREE_EXTRA = ["systemd"]


def run(cmd, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.STDOUT)
    if "input" not in kw:
        kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(cmd, text=True, **kw)


def field(deb, name):
    return run(["dpkg-deb", "-f", deb, name]).stdout.strip()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def in_root(root, *cmd):
    return run(["chroot", root] + list(cmd))


def lint(checks, debs):
    out = run(["lintian", "--fail-on", "error,warning", "--info", "--display-info"] + debs)
    print(out.stdout)
    checks.equal("lintian: no error or warning (%d packages)" % len(debs), out.returncode, 0)


def arm_binaries_run(checks, debs, upstream):
    for deb in debs:
        arch = field(deb, "Architecture")
        with tempfile.TemporaryDirectory() as tmp:
            run(["dpkg-deb", "-x", deb, tmp], check=True)
            out = run([QEMU[arch], os.path.join(tmp, "usr/bin/eddy"), "--version"])
            checks.equal("%s: eddy --version under %s" % (arch, QEMU[arch]), out.stdout.strip(), "eddy " + upstream)
            kind = run(["file", "-b", os.path.join(tmp, "usr/bin/eddy")]).stdout
            checks.check("%s: the binary is ARM and stripped" % arch, "ARM" in kind and ", stripped" in kind, kind)


def tree_digest(root):
    """Every entry under DATA: path, type, owner, mode, and content for
    regular files."""
    h = hashlib.sha256()
    base = os.path.join(root, DATA.lstrip("/"))
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            h.update(("%s %o %d %d\n" % (os.path.relpath(path, base), st.st_mode, st.st_uid, st.st_gid)).encode())
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def owners(root):
    """The distinct (uid, gid) of everything under DATA."""
    base = os.path.join(root, DATA.lstrip("/"))
    out = set()
    for dirpath, dirnames, filenames in os.walk(base):
        for name in [dirpath] + [os.path.join(dirpath, n) for n in filenames]:
            st = os.lstat(name)
            out.add((st.st_uid, st.st_gid))
    return out


def produce(port, lines):
    text = "".join("%s\n" % line for line in lines)
    return run(["kcat", "-P", "-b", "127.0.0.1:%d" % port, "-t", TOPIC, "-K:", "-X", "acks=all"], input=text)


def consume(port):
    out = run(["kcat", "-C", "-b", "127.0.0.1:%d" % port, "-t", TOPIC, "-o", "beginning", "-e", "-q",
               "-f", "%o %k:%s\n"], stderr=subprocess.PIPE)
    return out.stdout.splitlines()


def start(checks, root, label, tmp, strace=False):
    runner = unit_runner.UnitRunner(root, UNIT, os.path.join(tmp, "journal.log"),
                                    os.path.join(tmp, "strace.log") if strace else None)
    runner.start()
    try:
        states = runner.wait_ready()
    except Exception:
        runner.kill()
        raise
    checks.check("%s: READY=1 from eddy (Type=notify)" % label, states, states)
    return runner


def set_port(root, port):
    """Edits the conffile's listener, as an administrator would."""
    path = os.path.join(root, CONF.lstrip("/"))
    with open(path) as f:
        text = f.read()
    edited = re.sub(r"^listeners=.*$", "listeners=PLAINTEXT://127.0.0.1:%d" % port, text, count=1, flags=re.M)
    with open(path, "w") as f:
        f.write(edited)
    return edited


def conf_text(root):
    with open(os.path.join(root, CONF.lstrip("/"))) as f:
        return f.read()


def syscalls_allowed(checks, runner, strace_path):
    used, families = unit_runner.syscalls_after_exec(strace_path)
    allowed = unit_runner.allowed_syscalls(runner.settings.get("SystemCallFilter", []))
    checks.check("strace saw eddy's system calls", len(used) > 20, sorted(used))
    # The comparison means something only if the filter is what the unit
    # says: eddy's own calls in, @privileged ones out.
    checks.check("the unit's filter allows sendfile and fdatasync, not chroot or setuid",
                 {"sendfile", "fdatasync"} <= allowed and not {"chroot", "setuid"} & allowed)
    checks.equal("every system call eddy made is allowed by SystemCallFilter=", sorted(used - allowed), [])
    restricted = set(runner.setting("RestrictAddressFamilies").split())
    checks.check("eddy opened sockets (AF_INET for the listener)", "AF_INET" in families, sorted(families))
    checks.equal("every socket family eddy used is in RestrictAddressFamilies=", sorted(families - restricted), [])


def verify_unit(checks, root):
    # The tree's own systemd (TREE_EXTRA): the targets the unit refers to
    # are there. man(1) is not, so the Documentation= check is left out.
    out = in_root(root, "systemd-analyze", "verify", "--man=no", UNIT)
    checks.check("systemd-analyze verify eddy.service", out.returncode == 0 and not out.stdout.strip(), out.stdout)
    out = in_root(root, "systemd-analyze", "security", "--offline=yes", UNIT)
    level = re.search(r"Overall exposure level for eddy.service: ([0-9.]+) (\w+)", out.stdout)
    print("systemd-analyze security: %s" % (level.group(0) if level else out.stdout[-500:]))
    checks.check("systemd-analyze security: exposure below 2.0", level and float(level.group(1)) < 2.0, out.stdout)


def install(checks, root, deb):
    out = in_root(root, "dpkg", "-i", "/tmp/" + os.path.basename(deb))
    checks.check("dpkg -i %s" % os.path.basename(deb), out.returncode == 0, out.stdout)
    user = in_root(root, "getent", "passwd", "eddy").stdout.strip().split(":")
    checks.check("system user eddy: uid < 1000, home %s, no login shell" % DATA,
                 len(user) == 7 and int(user[2]) < 1000 and user[5] == DATA and user[6].endswith("nologin"), user)
    st = os.stat(os.path.join(root, DATA.lstrip("/")))
    checks.equal("%s: owned by eddy, mode 0750" % DATA, (st.st_uid, st.st_gid, st.st_mode & 0o7777),
                 (int(user[2]), int(user[3]), 0o750))
    conffiles = in_root(root, "dpkg-query", "-W", "-f=${Conffiles}", "eddy").stdout
    checks.check("%s is a conffile" % CONF, CONF in conffiles, conffiles)
    checks.check("log.dirs=%s in the conffile" % DATA, "\nlog.dirs=%s\n" % DATA in conf_text(root))
    wants = os.path.join(root, "etc/systemd/system/multi-user.target.wants/eddy.service")
    checks.check("the unit is enabled (multi-user.target.wants)", os.path.islink(wants))
    man = in_root(root, "sh", "-c", "zcat /usr/share/man/man1/eddy.1.gz | head -1")
    checks.check("the man page eddy(1) is installed", man.stdout.startswith(".TH EDDY 1"), man.stdout)
    return int(user[2]), int(user[3])


def first_run(checks, root, tmp, port, count):
    runner = start(checks, root, "install", tmp, strace=True)
    try:
        checks.check("install: the conffile's port accepts connections", eddy_fixture.port_accepts(port))
        out = produce(port, ["key-%d:value-%d" % (i, i) for i in range(count)])
        checks.equal("kcat produces %d messages (exit code)" % count, out.returncode, 0)
        got = consume(port)
        checks.equal("kcat consumes them back", got, ["%d key-%d:value-%d" % (i, i, i) for i in range(count)])
    finally:
        rc = runner.stop()
    checks.equal("SIGTERM (systemctl stop): eddy exits 0", rc, 0)
    syscalls_allowed(checks, runner, os.path.join(tmp, "strace.log"))
    return runner.log()


def upgrade(checks, root, tmp, deb, port, count, eddy_ids):
    before_conf, before_data = conf_text(root), tree_digest(root)
    out = in_root(root, "dpkg", "-i", "/tmp/" + os.path.basename(deb))
    checks.check("upgrade: dpkg -i %s, no conffile prompt" % os.path.basename(deb), out.returncode == 0, out.stdout)
    version = in_root(root, "dpkg-query", "-W", "-f=${Version}", "eddy").stdout
    checks.equal("upgrade: the new version is installed", version, field(deb, "Version"))
    checks.equal("upgrade: the edited conffile is kept", conf_text(root), before_conf)
    checks.equal("upgrade: the data directory is unchanged, byte for byte", tree_digest(root), before_data)
    runner = start(checks, root, "upgrade", tmp)
    try:
        got = consume(port)
        checks.equal("upgrade: the messages are still there", got[:count],
                     ["%d key-%d:value-%d" % (i, i, i) for i in range(count)])
        checks.equal("upgrade: kcat produces after the upgrade", produce(port, ["after:upgrade"]).returncode, 0)
        checks.equal("upgrade: the log continues at offset %d" % count, consume(port)[count:], ["%d after:upgrade" % count])
    finally:
        checks.equal("upgrade: eddy stops cleanly", runner.stop(), 0)
    checks.equal("everything under %s belongs to eddy" % DATA, owners(root), {eddy_ids})


def service_active(checks, tree, label, port, old_pid=None):
    """eddy.service is active and running (Type=notify: only after
    READY=1), saying where it serves; returns its main PID."""
    props = tree.wait_for("eddy.service", {"ActiveState": "active", "SubState": "running"}, 60)
    checks.equal("%s: eddy.service active (running)" % label, (props.get("ActiveState"), props.get("SubState")),
                 ("active", "running"))
    status = tree.show("eddy.service", "StatusText")["StatusText"]
    checks.equal("%s: its status says where it serves" % label, status, "serving on PLAINTEXT://127.0.0.1:%d" % port)
    pid = tree.show("eddy.service", "MainPID")["MainPID"]
    if old_pid is not None:
        checks.check("%s: a new eddy process" % label, pid not in ("0", old_pid), (old_pid, pid))
    return pid


def sandboxed(checks, tree, pid):
    status = tree.run("cat", "/proc/%s/status" % pid).stdout
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    checks.equal("systemd's sandbox: seccomp filter, no new privileges, no capabilities",
                 (fields.get("Seccomp"), fields.get("NoNewPrivs"), fields.get("CapEff")), ("2", "1", "0" * 16))


def under_systemd(checks, root, tmp, deb, port, messages):
    """The tree booted with systemd as PID 1; returns how many messages the
    topic holds afterwards."""
    tree = booted_tree.BootedTree(root, os.path.join(tmp, "console.log"))
    # Not /tmp: systemd-nspawn mounts a tmpfs there.
    run(["cp", deb, os.path.join(root, "root")], check=True)
    try:
        checks.check("systemd boots the tree as PID 1 (systemd-nspawn --boot)",
                     tree.boot() in ("running", "degraded"), tree.run("systemctl", "--failed", "--no-pager").stdout)
        pid = service_active(checks, tree, "boot", port)
        sandboxed(checks, tree, pid)
        checks.equal("systemd: the messages are served", len(consume(port)), messages)
        checks.equal("systemd: kcat produces", produce(port, ["under:systemd"]).returncode, 0)
        messages += 1
        out = tree.run("systemctl", "restart", "eddy.service")
        checks.check("systemctl restart eddy (returns once READY=1)", out.returncode == 0, out.stdout)
        pid = service_active(checks, tree, "restart", port, pid)
        checks.equal("restart: the messages are kept", consume(port)[messages - 1:], ["%d under:systemd" % (messages - 1)])
        tree.run("systemctl", "kill", "--signal=SIGKILL", "eddy.service")
        # RestartSec=5s, then the start job waits for READY=1.
        props = tree.wait_for("eddy.service", {"NRestarts": "1", "ActiveState": "active", "SubState": "running"}, 60)
        checks.equal("SIGKILL: systemd starts eddy again (Restart=on-failure)",
                     (props.get("NRestarts"), props.get("ActiveState")), ("1", "active"))
        pid = service_active(checks, tree, "after SIGKILL", port, pid)
        checks.equal("after SIGKILL: the messages are kept", len(consume(port)), messages)
        out = tree.run("dpkg", "-i", "/root/" + os.path.basename(deb))
        checks.check("systemd: dpkg -i over the installed package", out.returncode == 0, out.stdout)
        pid = service_active(checks, tree, "dpkg -i restarted the running service", port, pid)
        checks.equal("systemd: the messages are kept across it", len(consume(port)), messages)
        out = tree.run("systemctl", "stop", "eddy.service")
        props = tree.show("eddy.service", "ActiveState", "Result", "ExecMainStatus")
        checks.equal("systemctl stop eddy: inactive, exit code 0", (out.returncode, props.get("ActiveState"),
                                                                    props.get("Result"), props.get("ExecMainStatus")),
                     (0, "inactive", "success", "0"))
        if checks.failed:
            print("---- journalctl -u eddy ----\n" + tree.journal("eddy.service")[-6000:])
    finally:
        rc = tree.poweroff()
    checks.equal("the container's systemd powers off cleanly", rc, 0)
    return messages


def remove_and_purge(checks, root, tmp, deb, port, messages):
    data_before = tree_digest(root)
    out = in_root(root, "dpkg", "-r", "eddy")
    checks.check("dpkg -r eddy", out.returncode == 0, out.stdout)
    checks.check("remove: /usr/bin/eddy and the unit are gone",
                 not os.path.exists(os.path.join(root, "usr/bin/eddy"))
                 and not os.path.exists(os.path.join(root, UNIT.lstrip("/"))))
    checks.check("remove: the conffile stays", os.path.exists(os.path.join(root, CONF.lstrip("/"))))
    checks.equal("remove: the data stays, byte for byte", tree_digest(root), data_before)
    out = in_root(root, "dpkg", "-i", "/tmp/" + os.path.basename(deb))
    checks.check("install again after remove", out.returncode == 0, out.stdout)
    runner = start(checks, root, "reinstall", tmp)
    try:
        checks.equal("reinstall: the same messages are served", len(consume(port)), messages)
    finally:
        checks.equal("reinstall: eddy stops cleanly", runner.stop(), 0)
    out = in_root(root, "dpkg", "-P", "eddy")
    checks.check("dpkg -P eddy", out.returncode == 0, out.stdout)
    checks.check("purge: /etc/eddy is gone", not os.path.exists(os.path.join(root, "etc/eddy")))
    checks.check("purge: %s is gone" % DATA, not os.path.exists(os.path.join(root, DATA.lstrip("/"))))
    checks.check("purge: the unit is no longer enabled",
                 not os.path.lexists(os.path.join(root, "etc/systemd/system/multi-user.target.wants/eddy.service")))
    status = run(["chroot", root, "dpkg-query", "-W", "-f=${db:Status-Abbrev}", "eddy"],
                 stderr=subprocess.DEVNULL).stdout.strip()
    checks.check("purge: dpkg knows nothing of eddy any more", status in ("", "un"), status)
    checks.check("purge: the system user stays (Debian practice)", in_root(root, "getent", "passwd", "eddy").returncode == 0)


def upgrade_package(binary, upstream, tmp):
    """A second build of the same binary with a higher version."""
    out = run([os.path.join(SRC, "scripts", "deb", "build-deb.sh"), "amd64", binary, tmp, upstream + "+upgrade1"],
              stderr=subprocess.PIPE)
    if out.returncode != 0:
        raise AssertionError("build-deb.sh for the upgrade failed: %s" % out.stderr)
    return out.stdout.strip().splitlines()[-1]


def depends(deb):
    """Package names in Depends (first alternative, no versions)."""
    return [d.split("|")[0].split("(")[0].strip() for d in field(deb, "Depends").split(",")]


def debian_12(checks, amd64, binary, upstream, tmp):
    root = os.path.join(tmp, "root")
    os.makedirs(root)
    started = time.monotonic()
    how = debian_tree.make_tree(root, "amd64", depends(amd64) + TREE_EXTRA)
    print("debian tree ready (%s) in %.1f s" % (how, time.monotonic() - started))
    newer = upgrade_package(binary, upstream, tmp)
    for deb in (amd64, newer):
        run(["cp", deb, os.path.join(root, "tmp")], check=True)
    try:
        eddy_ids = install(checks, root, amd64)
        port = free_port()
        set_port(root, port)
        verify_unit(checks, root)
        count = 1000
        first_run(checks, root, tmp, port, count)
        upgrade(checks, root, tmp, newer, port, count, eddy_ids)
        messages = under_systemd(checks, root, tmp, newer, port, count + 1)
        checks.equal("after systemd: everything under %s belongs to eddy" % DATA, owners(root), {eddy_ids})
        remove_and_purge(checks, root, tmp, newer, port, messages)
    finally:
        journal = os.path.join(tmp, "journal.log")
        if checks.failed and os.path.exists(journal):
            with open(journal, errors="replace") as f:
                print("---- eddy's log (the journal) ----\n" + f.read()[-6000:])
        debian_tree.remove_tree(root)


def main():
    parser = argparse.ArgumentParser(description="The Debian packages of make deb, installed and used.")
    parser.add_argument("--debs", required=True, help="directory with eddy_*_{amd64,arm64,armhf}.deb")
    parser.add_argument("--binary", required=True, help="the amd64 eddy the package holds (for the upgrade build)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("package_test: needs root (chroot, debootstrap)")
    checks = Checks()
    debs = {field(os.path.join(args.debs, n), "Architecture"): os.path.join(args.debs, n)
            for n in sorted(os.listdir(args.debs)) if n.endswith(".deb")}
    try:
        checks.equal("packages for amd64, arm64, armhf", sorted(debs), ["amd64", "arm64", "armhf"])
        upstream = field(debs["amd64"], "Version")
        for arch, deb in sorted(debs.items()):
            print("%s: %s, %d bytes, Installed-Size %s KiB" % (arch, os.path.basename(deb), os.path.getsize(deb),
                                                              field(deb, "Installed-Size")))
        lint(checks, [debs[a] for a in sorted(debs)])
        arm_binaries_run(checks, [debs[a] for a in ("arm64", "armhf") if a in debs], upstream)
        with tempfile.TemporaryDirectory(prefix="eddy-package-test-") as tmp:
            debian_12(checks, debs["amd64"], args.binary, upstream, tmp)
    except Exception as e:  # noqa: BLE001 - any escape is a test failure
        import traceback
        traceback.print_exc()
        checks.fail("test body completed", "%s: %s" % (type(e).__name__, e))
    checks.finish()


if __name__ == "__main__":
    main()
