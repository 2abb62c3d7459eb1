"""Runs eddy in a Debian tree (chroot) the way its systemd unit would, for
the package test's run under strace (a traced service under systemd as PID
1, booted_tree.py, would need the unit changed): ExecStart= of the installed unit file,
as its User=/Group= (setpriv, with no_new_privs as NoNewPrivileges=yes),
with its UMask= and LimitNOFILE=, a clean environment as systemd gives a
service, and NOTIFY_SOCKET pointing at a datagram socket this runner
listens on, as systemd does for Type=notify: started() returns once READY=1
arrives. What systemd's sandboxing adds (ProtectSystem=, SystemCallFilter=,
...) is not applied here; the test checks the traced system calls against
the unit's filter instead (syscalls_after_exec)."""

import os
import re
import resource
import shlex
import signal
import socket
import subprocess

ENV_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def unit_settings(path):
    """The [Service] assignments of a unit file: name -> list of values."""
    settings, section = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line
                continue
            name, _, value = line.partition("=")
            if section == "[Service]":
                settings.setdefault(name, []).append(value)
    return settings


class UnitRunner:
    def __init__(self, root, unit_path, log_path, strace_path=None):
        self.root = root
        self.settings = unit_settings(os.path.join(root, unit_path.lstrip("/")))
        self.log_path = log_path
        self.strace_path = strace_path
        self.proc = None
        self.notify = None

    def setting(self, name):
        values = self.settings.get(name)
        if not values:
            raise AssertionError("the unit has no %s=" % name)
        return values[-1]

    def command(self):
        user, group = self.setting("User"), self.setting("Group")
        run = ["chroot", self.root, "setpriv", "--reuid=" + user, "--regid=" + group, "--init-groups"]
        if self.setting("NoNewPrivileges") == "yes":
            run.append("--no-new-privs")
        run += ["--"] + shlex.split(self.setting("ExecStart"))
        if self.strace_path:
            run = ["strace", "-f", "-qq", "-o", self.strace_path] + run
        return run

    def environment(self, user):
        return {"PATH": ENV_PATH, "LANG": "C.UTF-8", "USER": user, "LOGNAME": user,
                "HOME": "/var/lib/" + user, "SHELL": "/usr/sbin/nologin", "NOTIFY_SOCKET": "/run/eddy-test/notify"}

    def _listen_notify(self):
        directory = os.path.join(self.root, "run", "eddy-test")
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "notify")
        if os.path.exists(path):
            os.remove(path)
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(path)
        os.chmod(path, 0o777)  # as systemd's /run/systemd/notify: the service's user sends to it

    def start(self):
        self._listen_notify()
        umask = int(self.setting("UMask"), 8)
        nofile = int(self.setting("LimitNOFILE"))

        def as_systemd_sets_up():
            os.umask(umask)
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.command(), env=self.environment(self.setting("User")),
                                     stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                     preexec_fn=as_systemd_sets_up)

    def wait_ready(self, timeout=60):
        """The notify datagrams until READY=1 (systemd's start job); returns
        them. Raises when eddy exits first or nothing comes in time."""
        self.notify.settimeout(timeout)
        got = []
        while True:
            try:
                datagram = self.notify.recv(4096).decode("utf-8", "replace")
            except socket.timeout:
                raise AssertionError("no READY=1 within %d s (got %r); log:\n%s" % (timeout, got, self.log()))
            got.append(datagram)
            if "READY=1" in datagram.split("\n"):
                return got

    def stop(self, timeout=60):
        """SIGTERM, as systemctl stop sends (KillSignal= default); returns
        the exit code."""
        if self.strace_path:
            self._signal_eddy(signal.SIGTERM)
        else:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("eddy did not stop within %d s of SIGTERM; log:\n%s" % (timeout, self.log()))
        finally:
            self._log.close()
            self.notify.close()
            self.proc = None

    def _signal_eddy(self, sig):
        # Under strace the child is strace; eddy is the traced process whose
        # executable is the tree's /usr/bin/eddy.
        for pid in _descendants(self.proc.pid):
            try:
                if os.readlink("/proc/%d/exe" % pid).endswith("/usr/bin/eddy"):
                    os.kill(pid, sig)
                    return
            except OSError:
                continue
        raise AssertionError("no eddy process under strace")

    def kill(self):
        if self.proc is not None:
            for pid in _descendants(self.proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")


def _descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                children = [int(c) for c in f.read().split()]
        except OSError:
            children = []
        out += children
        todo += children
    return out


SYSCALL = re.compile(r"^\d+\s+([a-z0-9_]+)\(")
RESUMED = re.compile(r"^\d+\s+<\.\.\. ([a-z0-9_]+) resumed>")


SOCKET_FAMILY = re.compile(r"^\d+\s+socket\((AF_[A-Z0-9]+),")


def syscalls_after_exec(strace_path, program="/usr/bin/eddy"):
    """The names of the system calls made from the successful execve of
    program on (those of chroot and setpriv before it are not the
    service's), and the address families of the sockets it opened."""
    names, families, started = set(), set(), False
    with open(strace_path, errors="replace") as f:
        for line in f:
            if not started:
                started = ('execve("%s"' % program) in line and line.rstrip().endswith("= 0")
                continue
            m = SYSCALL.match(line) or RESUMED.match(line)
            if m:
                names.add(m.group(1))
            family = SOCKET_FAMILY.match(line)
            if family:
                families.add(family.group(1))
    return names, families


def filter_groups():
    """systemd-analyze syscall-filter: group name -> members (names and
    @groups)."""
    out = subprocess.run(["systemd-analyze", "syscall-filter"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, check=True).stdout
    groups, current = {}, None
    for line in out.splitlines():
        if line.startswith("@"):
            current = line.strip()
            groups[current] = set()
        elif current and line.strip() and not line.strip().startswith("#"):
            groups[current].add(line.strip())
    return groups


def expand(groups, name, seen=None):
    seen = set() if seen is None else seen
    if not name.startswith("@"):
        return {name}
    if name in seen:
        return set()
    seen.add(name)
    out = set()
    for member in groups.get(name, ()):
        out |= expand(groups, member, seen)
    return out


def allowed_syscalls(filters):
    """What SystemCallFilter= lines (in order) allow: the first allow-list
    sets the set, '~' lines remove from it."""
    groups = filter_groups()
    allowed = None
    for line in filters:
        deny = line.startswith("~")
        names = set()
        for item in line.lstrip("~").split():
            names |= expand(groups, item)
        if deny:
            allowed = (allowed if allowed is not None else set()) - names
        else:
            allowed = names if allowed is None else allowed | names
    return allowed or set()
