"""`eddy forward status` against a real eddy: the control socket
(<data dir>/eddy.sock, src/net/control_server.h) as `eddy serve` wires it.

Expects serve to start a net::ControlServer on <log.dirs>/eddy.sock whose
handler answers "forward status" with "ok\\n" + a table, "forward status
json" with "ok\\n" + a JSON document, anything else with
"error: unknown command...", and to stop it (removing the file) on SIGTERM.
Checks: the socket file (a socket, mode 0600); the tool by --data-dir and by
--config/--override (exit 0, body on stdout); --json; an unknown command; a
silent and an oversize client neither block others nor stop the broker (the
silent one is dropped after ~5 s); SIGKILL leaves a stale socket that the
tool reports and the next start replaces; SIGTERM removes it."""

import json
import os
import socket
import stat
import subprocess
import time

import eddy_fixture

EDDY = os.environ.get("EDDY_BIN")


def eddy_cli(*args, timeout=30):
    return subprocess.run([EDDY] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


def status(broker, *extra):
    return eddy_cli("forward", "status", "--data-dir", broker.data_dir, *extra)


def socket_path(broker):
    return os.path.join(broker.data_dir, "eddy.sock")


def is_socket(path):
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def raw_connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(15)
    s.connect(path)
    return s


def read_to_close(s):
    """Bytes until the server closes (EOF or reset)."""
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def test_control_socket_mode(eddy):
    path = socket_path(eddy)
    eddy_fixture.wait_until(lambda: is_socket(path), 10, "the control socket " + path)
    assert oct(stat.S_IMODE(os.lstat(path).st_mode)) == oct(0o600), "control socket mode"


def test_status_by_data_dir_and_by_config(eddy):
    r = status(eddy)
    assert r.returncode == 0 and r.stdout.strip() != "" and r.stderr == "", \
        "status by --data-dir: exit 0, a table on stdout: rc=%d stdout=%r stderr=%r" \
        % (r.returncode, r.stdout[:300], r.stderr[:300])
    print("---- eddy forward status ----\n" + r.stdout + "-----------------------------")
    r = eddy_cli("forward", "status", "--config", eddy.config, "--override", "log.dirs=" + eddy.data_dir)
    assert r.returncode == 0 and r.stdout.strip() != "", \
        "status by --config/--override: exit 0: rc=%d stderr=%r" % (r.returncode, r.stderr[:300])


def test_json(eddy):
    r = status(eddy, "--json")
    assert r.returncode == 0, "--json: exit 0: stderr=%r" % r.stderr[:300]
    json.loads(r.stdout)  # a JSON document


def test_unknown_command(eddy):
    with raw_connect(socket_path(eddy)) as s:
        s.sendall(b"no such command\n")
        reply = read_to_close(s)
    assert reply.startswith(b"error: unknown command"), "unknown command: an error reply: %r" % reply[:200]


def test_silent_and_oversize_clients(eddy):
    """A client that sends nothing does not hold up others and is dropped."""
    path = socket_path(eddy)
    silent = raw_connect(path)
    started = time.monotonic()
    r = status(eddy)
    assert r.returncode == 0, "status while a silent client is connected: %s" % r.stderr
    with raw_connect(path) as s:
        s.sendall(b"x" * 2000 + b"\n")
        reply = read_to_close(s)
    assert reply == b"", "oversize command: closed without a reply"
    r = status(eddy)
    assert r.returncode == 0, "status after an oversize command: %s" % r.stderr
    reply = read_to_close(silent)
    waited = time.monotonic() - started
    silent.close()
    assert reply == b"" and 4.0 <= waited < 12.0, "silent client dropped after ~5 s (%.1f s)" % waited


def test_stale_socket_after_sigkill(eddy):
    """SIGKILL leaves the socket file behind: reported as stale, replaced on start."""
    path = socket_path(eddy)
    eddy.kill()
    assert is_socket(path), "socket file left by SIGKILL"
    r = status(eddy)
    assert r.returncode == 1 and "no eddy is running with data directory %s (stale control socket at %s" \
        % (eddy.data_dir, path) in r.stderr, "stale socket: exit 1: %s" % r.stderr
    eddy.start()
    eddy_fixture.wait_until(lambda: status(eddy).returncode == 0, 10, "status after restart over a stale socket")


def test_sigterm_removes_the_socket(eddy):
    path = socket_path(eddy)
    assert eddy.stop() == 0, "SIGTERM: exit code"
    assert not os.path.lexists(path), "SIGTERM removes the socket file"
    r = status(eddy)
    assert r.returncode == 1 and "no eddy is running with data directory %s (no control socket at %s)" \
        % (eddy.data_dir, path) in r.stderr, "stopped: exit 1, no eddy is running: %s" % r.stderr
