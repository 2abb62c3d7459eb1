"""A Debian tree booted with systemd as PID 1 (systemd-nspawn --boot), for
the package test's service checks: systemctl and journalctl run inside
it through nsenter (the container's namespaces, as root).

The container shares the host's network, so the test's kcat reaches the
port eddy listens on as 127.0.0.1:PORT. It is not registered with
systemd-machined (--register=no) and runs in the caller's own cgroup
(--keep-unit): the machine needs no system bus, and the host's PID 1 need
not be systemd (it is not on the development VMs)."""

import os
import signal
import subprocess
import time


def _children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def _comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


class BootedTree:
    def __init__(self, root, console_log):
        self.root = root
        self.console_log = console_log
        self.proc = None
        self.leader = None  # the container's PID 1 as the host sees it

    def boot(self, timeout=120):
        """Starts the container and waits until systemd has finished booting;
        returns `systemctl is-system-running` (running, degraded). Raises
        when it does not boot in time (the console output in the message)."""
        self._console = open(self.console_log, "ab")
        self.proc = subprocess.Popen(
            ["systemd-nspawn", "--quiet", "--directory=" + self.root, "--boot", "--register=no", "--keep-unit",
             "--console=pipe", "--link-journal=no"],
            stdin=subprocess.DEVNULL, stdout=self._console, stderr=self._console)
        deadline = time.monotonic() + timeout
        while self.leader is None:
            if self.proc.poll() is not None:
                raise AssertionError("systemd-nspawn exited with %d before booting:\n%s" % (self.proc.returncode,
                                                                                            self.console()))
            if time.monotonic() > deadline:
                raise AssertionError("no systemd in the container within %d s:\n%s" % (timeout, self.console()))
            self.leader = next((c for c in _children(self.proc.pid) if _comm(c) == "systemd"), None)
            time.sleep(0.05)
        while True:
            # Fails (no private socket yet) until PID 1 is up; --wait then
            # blocks until the boot is over.
            state = self.run("systemctl", "is-system-running", "--wait", timeout=max(1, deadline - time.monotonic()))
            if state.stdout.strip() in ("running", "degraded"):
                return state.stdout.strip()
            if time.monotonic() > deadline:
                raise AssertionError("the container did not finish booting within %d s: %s\n%s" % (
                    timeout, state.stdout, self.console()))
            time.sleep(0.1)

    def run(self, *cmd, timeout=120):
        """cmd inside the container (stdout and stderr together)."""
        try:
            return subprocess.run(["nsenter", "--target=%d" % self.leader, "--all"] + list(cmd),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(e.cmd, -1, (e.stdout or b"").decode("utf-8", "replace")
                                               if isinstance(e.stdout, bytes) else (e.stdout or ""))

    def show(self, unit, *properties):
        """systemctl show: {property: value}."""
        out = self.run("systemctl", "show", unit, "--property=" + ",".join(properties)).stdout
        return dict(line.partition("=")[::2] for line in out.splitlines() if "=" in line)

    def wait_for(self, unit, condition, timeout, interval=0.1):
        """Polls the unit's properties (condition's keys) until condition
        holds; returns the last properties seen, holding or not."""
        deadline = time.monotonic() + timeout
        while True:
            props = self.show(unit, *condition)
            if all(props.get(k) == v for k, v in condition.items()) or time.monotonic() > deadline:
                return props
            time.sleep(interval)

    def journal(self, unit):
        return self.run("journalctl", "--no-pager", "--unit=" + unit).stdout

    def poweroff(self, timeout=60):
        """systemctl poweroff; returns systemd-nspawn's exit code (0: the
        container's systemd shut down cleanly). Kills it after timeout."""
        if self.proc is None:
            return None
        self.run("systemctl", "poweroff", "--no-block", timeout=30)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        finally:
            self._console.close()

    def kill(self):
        """SIGKILL to the container's PID 1 (which ends everything in its
        PID namespace), then to systemd-nspawn."""
        if self.proc is not None and self.proc.poll() is None:
            if self.leader is not None:
                try:
                    os.kill(self.leader, signal.SIGKILL)
                except OSError:
                    pass
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def console(self):
        try:
            with open(self.console_log, "rb") as f:
                return f.read().decode("utf-8", "replace")[-4000:]
        except OSError:
            return ""
