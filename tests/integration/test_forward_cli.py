"""`eddy forward status` without a broker: bad flags (exit 2), no control
socket and a stale one (exit 1, "no eddy is running with data directory"),
the data directory taken from --config/--override, and the reply handling
against a stand-in control server written here (the protocol of
src/net/control_server.h): "ok\\n" + body printed (exit 0), "error: why"
on stderr (exit 1), --json sends "forward status json", --watch repeats
with the screen cleared between rounds."""

import os
import signal
import socket
import subprocess
import threading

import pytest

import eddy_fixture

EDDY = os.environ.get("EDDY_BIN")
SRC = os.environ.get("EDDY_SOURCE_DIR")
CLEAR = "\033[H\033[2J"


def eddy(*args, timeout=30):
    return subprocess.run([EDDY] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


class FakeControlServer:
    """Answers each connection's command line with reply_for(command)."""

    def __init__(self, path, reply_for):
        self.path = path
        self.reply_for = reply_for
        self.commands = []
        self.lock = threading.Lock()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(16)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                command = data.split(b"\n", 1)[0].decode("utf-8")
                with self.lock:
                    self.commands.append(command)
                conn.sendall(self.reply_for(command).encode("utf-8"))

    def seen(self):
        with self.lock:
            return list(self.commands)

    def close(self):
        self.sock.close()
        os.unlink(self.path)


@pytest.fixture
def data(tmp_path):
    """An empty data directory (nothing running)."""
    d = tmp_path / "data"
    d.mkdir()
    return str(d)


USAGE_ERRORS = [
    ("unknown option", ["status", "--bogus"], "unknown option '--bogus'"),
    ("missing command", [], "missing command"),
    ("unknown command", ["stats"], "unknown command 'stats'"),
    ("--watch 0", ["status", "--data-dir", "{data}", "--watch", "0"], "--watch: expected an integer"),
    ("--watch not a number", ["status", "--data-dir", "{data}", "--watch", "x"], "--watch: expected an integer"),
    ("--data-dir without value", ["status", "--data-dir"], "needs a value"),
    ("--data-dir with --config", ["status", "--data-dir", "{data}", "--config", "x.properties"], "not both"),
    ("stray argument", ["status", "{data}"], "unexpected argument"),
    ("bad override", ["status", "--override", "no.such.key=1"], "no.such.key: unknown configuration key"),
    ("missing config file", ["status", "--config", "{tmp}/none.properties"], "cannot read"),
]


@pytest.mark.parametrize("args,message", [(a, m) for _n, a, m in USAGE_ERRORS], ids=[n for n, _a, _m in USAGE_ERRORS])
def test_usage_error_exits_2(data, tmp_path, args, message):
    r = eddy(*["forward"] + [a.format(data=data, tmp=tmp_path) for a in args])
    assert r.returncode == 2 and message in r.stderr and r.stdout == "", \
        "exit 2 with message: rc=%d stdout=%r stderr=%r" % (r.returncode, r.stdout, r.stderr[:300])


def test_usage(data):
    r = eddy("forward", "status", "--bogus")
    assert "Usage: eddy forward status" in r.stderr, "usage printed with a usage error: %r" % r.stderr[:300]
    for args in (["--help"], ["status", "--help"]):
        r = eddy("forward", *args)
        assert r.returncode == 0 and "Usage: eddy forward status" in r.stdout and "--watch" in r.stdout, \
            "eddy forward %s: exit 0, usage on stdout: rc=%d %r" % (" ".join(args), r.returncode, r.stdout[:300])
    r = eddy("help")
    assert "eddy forward status" in r.stdout, "eddy help lists forward status: %r" % r.stdout[:300]


def test_nothing_running_exits_1(data, tmp_path):
    sock_path = os.path.join(data, "eddy.sock")
    want = "no eddy is running with data directory %s (no control socket at %s)" % (data, sock_path)
    r = eddy("forward", "status", "--data-dir", data)
    assert r.returncode == 1 and want in r.stderr, "no socket: exit 1 naming the data directory: rc=%d stderr=%r" \
        % (r.returncode, r.stderr)
    missing = str(tmp_path / "nowhere")
    r = eddy("forward", "status", "--data-dir", missing)
    assert r.returncode == 1 and ("no eddy is running with data directory " + missing) in r.stderr, \
        "missing data directory: exit 1: %s" % r.stderr
    # The data directory from the config file and overrides, as eddy serve reads it.
    config = os.path.join(SRC, "config", "gateway.properties")
    r = eddy("forward", "status", "--config", config, "--override", "log.dirs=" + data)
    assert r.returncode == 1 and want in r.stderr, "--config/--override: the socket under log.dirs: rc=%d stderr=%r" \
        % (r.returncode, r.stderr)
    r = subprocess.run([EDDY, "forward", "status"], cwd=str(tmp_path), stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    assert r.returncode == 1 and \
        "no eddy is running with data directory ./data (no control socket at ./data/eddy.sock)" in r.stderr, \
        "no flags: the default data directory ./data: rc=%d stderr=%r" % (r.returncode, r.stderr)


def test_stale_socket_exits_1(data):
    sock_path = os.path.join(data, "eddy.sock")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(sock_path)
    stale.close()  # the file stays; nobody listens: a killed eddy leaves this
    r = eddy("forward", "status", "--data-dir", data)
    assert r.returncode == 1 and \
        ("no eddy is running with data directory %s (stale control socket at %s" % (data, sock_path)) in r.stderr, \
        "stale socket: exit 1: rc=%d stderr=%r" % (r.returncode, r.stderr)


def test_socket_path_too_long(tmp_path):
    long_dir = str(tmp_path / ("d" * 120))
    r = eddy("forward", "status", "--data-dir", long_dir)
    want = "'%s/eddy.sock' is %d bytes long; this system allows at most 107" % (long_dir, len(long_dir) + 10)
    assert r.returncode == 1 and want in r.stderr, "socket path too long: exit 1 naming path and limit: %s" % r.stderr


TABLE = "LINK     STATE  LAG\ncentral  up     0\n"


@pytest.fixture
def server(data):
    """A stand-in running eddy; the test changes server.replies."""
    replies = {
        "forward status": "ok\n" + TABLE,
        "forward status json": 'ok\n{"links": [{"name": "central", "state": "up", "lag": 0}]}',
    }
    server = FakeControlServer(os.path.join(data, "eddy.sock"), lambda c: replies.get(c, "error: unknown command\n"))
    server.replies = replies
    yield server
    server.close()


def test_ok_replies(data, server):
    r = eddy("forward", "status", "--data-dir", data)
    assert (r.returncode, r.stdout, r.stderr) == (0, TABLE, ""), "ok reply: body on stdout"
    r = eddy("forward", "status", "--data-dir", data + "/")
    assert (r.returncode, r.stdout) == (0, TABLE), "trailing slash on --data-dir"
    r = eddy("forward", "status", "--data-dir", data, "--json")
    assert (r.returncode, r.stdout, r.stderr) == \
        (0, '{"links": [{"name": "central", "state": "up", "lag": 0}]}\n', ""), "--json: body (newline added) on stdout"
    assert server.seen() == ["forward status", "forward status", "forward status json"], "commands sent"


def test_error_and_bad_replies(data, server):
    server.replies["forward status"] = "error: forwarding is not configured\n"
    r = eddy("forward", "status", "--data-dir", data)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "eddy forward: forwarding is not configured\n"), \
        "error reply: exit 1, reason on stderr"
    server.replies["forward status"] = "garbage"
    r = eddy("forward", "status", "--data-dir", data)
    assert r.returncode == 1 and "unexpected reply 'garbage'" in r.stderr, "reply in neither form: exit 1: %s" % r.stderr
    server.replies["forward status"] = ""
    r = eddy("forward", "status", "--data-dir", data)
    assert r.returncode == 1 and "without a reply" in r.stderr, "no reply: exit 1: %s" % r.stderr


def test_watch(data, server):
    watch = subprocess.Popen([EDDY, "forward", "status", "--data-dir", data, "--watch", "1"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Each round prints (and flushes) its answer before it sleeps and asks
        # again, so the fourth request means three rounds are on stdout.
        eddy_fixture.wait_until(lambda: len(server.seen()) >= 4, 20, "three --watch rounds")
    finally:
        watch.send_signal(signal.SIGINT)
        out, _err = watch.communicate(timeout=10)
    assert out.count(CLEAR) >= 3 and out.count(TABLE) >= 3 and out.startswith(CLEAR + "Every 1s: eddy forward status"), \
        "--watch: rounds separated by a screen clear: %r" % out[:400]
    assert watch.returncode == -signal.SIGINT, "--watch ends on SIGINT"
