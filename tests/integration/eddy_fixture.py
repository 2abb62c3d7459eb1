"""Shared helpers for Eddy's integration tests (run under /usr/bin/python3
-m pytest; conftest.py turns them into fixtures).

A Broker is one `eddy serve` process on 127.0.0.1 with an ephemeral port and
a data directory in a temporary directory (the test's tmp_path_factory
directory; temp_dir() for callers outside pytest, the benchmarks); it can be
stopped (SIGTERM, exit code 0 expected) or killed (SIGKILL) and started
again on the same data directory.

Synchronisation is always "wait for a condition with a deadline"
(wait_until), never a fixed sleep; "nothing happens for N ms" is
stays_true_for() / nothing_happens_for(), the one place a test watches the
clock instead of an event.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

LISTENING = re.compile(rb"listening on PLAINTEXT://127\.0\.0\.1:(\d+)")


class FixtureError(Exception):
    pass


def wait_until(condition, timeout, what, interval=0.02):
    """Polls condition() until it returns a true value, which is returned.
    Raises FixtureError naming `what` when timeout seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise FixtureError("timed out after %.1f s waiting for %s" % (timeout, what))
        time.sleep(interval)


def stays_true_for(condition, ms, what, interval=0.02):
    """Polls condition() for ms milliseconds; raises AssertionError naming
    `what` the first time it is false. For "this keeps holding" (a paused
    accept queue stays paused, a connection stays open)."""
    deadline = time.monotonic() + ms / 1000.0
    started = time.monotonic()
    while True:
        if not condition():
            raise AssertionError("%s: stopped holding after %d of %d ms"
                                 % (what, (time.monotonic() - started) * 1000, ms))
        if time.monotonic() >= deadline:
            return
        time.sleep(interval)


def nothing_happens_for(event, ms, what, interval=0.02):
    """Proves event() stays false for ms milliseconds (no reply arrives, no
    message is forwarded); raises AssertionError naming `what` otherwise."""
    stays_true_for(lambda: not event(), ms, "nothing happens: " + what, interval)


def temp_dir(prefix):
    """A fresh temporary directory for callers outside pytest (the
    benchmarks); tests get theirs from tmp_path_factory (conftest.py)."""
    return tempfile.mkdtemp(prefix=prefix)


# Every Broker not yet closed, so that conftest.py can attach their logs to a
# failing test's report.
LIVE = []


def port_accepts(port, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


# Broker(config=NO_CONFIG): `eddy serve` without a properties file, on the
# built-in defaults (plus log.dirs, listeners and the overrides).
NO_CONFIG = "(no config file)"


class Broker:
    """One eddy process. overrides: dict of extra --override key=value.
    config: the properties file (default config/gateway.properties) or
    NO_CONFIG. wrapper: a command prefix (e.g. strace ...); the eddy process
    is then a child of the wrapper and signals go to eddy itself."""

    def __init__(self, overrides=None, config=None, wrapper=None, keep=None, tmp=None):
        self.bin = os.environ.get("EDDY_BIN")
        self.src = os.environ.get("EDDY_SOURCE_DIR")
        if not self.bin or not self.src:
            raise FixtureError("EDDY_BIN and EDDY_SOURCE_DIR must be set (run through ctest)")
        self.config = config or os.path.join(self.src, "config", "gateway.properties")
        self.overrides = dict(overrides or {})
        self.wrapper = list(wrapper or [])
        self.env = {}  # extra environment variables for eddy
        self.tmp = str(tmp) if tmp is not None else temp_dir("eddy-it-")
        os.makedirs(self.tmp, exist_ok=True)
        self.data_dir = os.path.join(self.tmp, "data")
        self.keep = os.environ.get("EDDY_KEEP_TMP") == "1" if keep is None else keep
        self.proc = None
        self.port = None
        self.starts = 0
        self.log_path = None
        LIVE.append(self)

    # -- lifecycle -------------------------------------------------------

    def start(self, port=0, timeout=30):
        """Starts eddy listening on 127.0.0.1:port (0: ephemeral) and waits
        until it logs its port and accepts connections."""
        if self.proc is not None:
            raise FixtureError("broker already running")
        self.starts += 1
        self.log_path = os.path.join(self.tmp, "eddy-%d.stderr" % self.starts)
        config_file = [] if self.config == NO_CONFIG else [self.config]
        cmd = self.wrapper + [self.bin, "serve"] + config_file + [
            "--override", "log.dirs=" + self.data_dir,
            "--override", "listeners=PLAINTEXT://127.0.0.1:%d" % port]
        for key, value in self.overrides.items():
            cmd += ["--override", "%s=%s" % (key, value)]
        self._log = open(self.log_path, "wb")
        env = dict(os.environ, **self.env) if self.env else None
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, env=env)

        def listening():
            m = LISTENING.search(self.log_bytes())
            if m:
                return int(m.group(1))
            if self.proc.poll() is not None:
                raise FixtureError("eddy exited with code %s before listening:\n%s"
                                   % (self.proc.returncode, self.log_text()))
            return None

        self.port = wait_until(listening, timeout, "eddy to log its listening port")
        wait_until(lambda: port_accepts(self.port), timeout, "port %d to accept connections" % self.port)
        return self.port

    @property
    def bootstrap(self):
        return "127.0.0.1:%d" % self.port

    def eddy_pid(self):
        """The pid of the eddy process itself (a child of the wrapper, if any)."""
        if not self.wrapper:
            return self.proc.pid

        def child():
            try:
                with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
                    pids = f.read().split()
            except OSError:
                return None
            return int(pids[0]) if pids else None

        return wait_until(child, 10, "the wrapped eddy process")

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Sends sig to eddy and waits for the process (and wrapper) to end.
        Returns eddy's exit code (negative: killed by that signal); with a
        wrapper, the wrapper's exit code."""
        if self.proc is None:
            raise FixtureError("broker not running")
        os.kill(self.eddy_pid(), sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise FixtureError("eddy did not stop within %d s after signal %d" % (timeout, sig))
        finally:
            self._log.close()
        self.proc = None
        return rc

    def kill(self):
        return self.stop(signal.SIGKILL)

    def restart(self, sig=signal.SIGTERM, keep_port=True, timeout=30):
        """Stops with sig and starts again on the same data directory, on the
        same port when keep_port and the port is still free (else a new
        ephemeral port: compare self.port). Returns the stop's exit code."""
        old = self.port
        rc = self.stop(sig)
        if keep_port:
            try:
                self.start(port=old, timeout=timeout)
                return rc
            except FixtureError:
                if self.proc is not None:
                    self.proc.kill()
                    self.proc.wait()
                    self.proc = None
                    self._log.close()
        self.start(port=0, timeout=timeout)
        return rc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_bytes(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()
        except OSError:
            return b""

    def log_text(self):
        return self.log_bytes().decode("utf-8", "replace")

    def close(self):
        if self in LIVE:
            LIVE.remove(self)
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(10)
            except Exception:
                pass
            self.proc = None
        if self.keep:
            print("kept", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def assert_no_closed_connection(broker):
    """The broker closed no client connection for a bad or unsupported
    request. Its log is the only place that says so: no metric counts these
    closes (eddy_requests_refused_total counts refused requests, not frames
    closed as garbage or cut short, and the tests run without the metrics
    listener)."""
    closed = [line for line in broker.log_text().splitlines() if "closing connection" in line]
    assert closed == [], "broker closed connections as bad requests:\n" + "\n".join(closed)[-3000:]


def numbered_log_counts(port, topic, count, partitions):
    """Reads topic raw: (distinct numbers seen, duplicates, out of order,
    misplaced, records) for the values "%09d" of rdkafka_idempotence.c,
    number n expected in partition n % partitions, in order."""
    import kafka_wire as w
    seen = set()
    duplicates = disorder = misplaced = total = 0
    with w.Connection(port) as conn:
        for p in range(partitions):
            previous = -1
            for _base, _last, data in w.fetch_all(conn, topic, p):
                for _off, _key, value, _headers in w.parse_records(data):
                    n = int(value)
                    total += 1
                    if n in seen:
                        duplicates += 1
                    seen.add(n)
                    if n <= previous:
                        disorder += 1
                    if n % partitions != p:
                        misplaced += 1
                    previous = n
    return seen, duplicates, disorder, misplaced, total


def assert_numbered_log(port, topic, count, partitions, label):
    """The log of topic holds each number 0..count-1 once, in order within
    each partition, in the partition number % partitions."""
    seen, duplicates, disorder, misplaced, total = numbered_log_counts(port, topic, count, partitions)
    missing = sorted(set(range(count)) - seen)
    assert duplicates == 0, "%s: no number twice" % label
    assert disorder == 0, "%s: numbers in order in each partition" % label
    assert misplaced == 0, "%s: each number in its partition" % label
    assert len(seen) == count, "%s: every number present (%d missing, e.g. %s)" % (label, len(missing), missing[:30])
    assert total == count, "%s: records in the log" % label
