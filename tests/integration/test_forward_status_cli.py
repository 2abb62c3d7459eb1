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
SRC = os.environ.get("EDDY_SOURCE_DIR")


def eddy(*args, timeout=30):
    return subprocess.run([EDDY] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


def status(broker, *extra):
    return eddy("forward", "status", "--data-dir", broker.data_dir, *extra)


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


def body(broker, checks):
    path = socket_path(broker)
    eddy_fixture.wait_until(lambda: is_socket(path), 10, "the control socket " + path)
    mode = stat.S_IMODE(os.lstat(path).st_mode)
    checks.equal("control socket mode", oct(mode), oct(0o600))

    r = status(broker)
    checks.check("status by --data-dir: exit 0, a table on stdout", r.returncode == 0 and r.stdout.strip() != "" and
                 r.stderr == "", "rc=%d stdout=%r stderr=%r" % (r.returncode, r.stdout[:300], r.stderr[:300]))
    table = r.stdout
    r = eddy("forward", "status", "--config", broker.config, "--override", "log.dirs=" + broker.data_dir)
    checks.check("status by --config/--override: exit 0", r.returncode == 0 and r.stdout.strip() != "",
                 "rc=%d stderr=%r" % (r.returncode, r.stderr[:300]))
    print("---- eddy forward status ----\n" + table + "-----------------------------")

    r = status(broker, "--json")
    try:
        document = json.loads(r.stdout)
    except ValueError as e:
        document = e
    checks.check("--json: exit 0, a JSON document", r.returncode == 0 and not isinstance(document, ValueError),
                 "rc=%d stdout=%r stderr=%r" % (r.returncode, r.stdout[:300], r.stderr[:300]))

    with raw_connect(path) as s:
        s.sendall(b"no such command\n")
        reply = read_to_close(s)
    checks.check("unknown command: an error reply", reply.startswith(b"error: unknown command"), reply[:200])

    # A client that sends nothing does not hold up others and is dropped.
    silent = raw_connect(path)
    started = time.monotonic()
    r = status(broker)
    checks.check("status while a silent client is connected", r.returncode == 0, r.stderr)
    with raw_connect(path) as s:
        s.sendall(b"x" * 2000 + b"\n")
        reply = read_to_close(s)
    checks.equal("oversize command: closed without a reply", reply, b"")
    r = status(broker)
    checks.check("status after an oversize command", r.returncode == 0, r.stderr)
    reply = read_to_close(silent)
    waited = time.monotonic() - started
    silent.close()
    checks.check("silent client dropped after ~5 s", reply == b"" and 4.0 <= waited < 12.0, "%.1f s" % waited)

    # SIGKILL leaves the socket file behind: reported as stale, replaced on start.
    broker.kill()
    checks.check("socket file left by SIGKILL", is_socket(path))
    r = status(broker)
    checks.check("stale socket: exit 1", r.returncode == 1 and "no eddy is running with data directory %s "
                 "(stale control socket at %s" % (broker.data_dir, path) in r.stderr, r.stderr)
    broker.start()
    eddy_fixture.wait_until(lambda: status(broker).returncode == 0, 10, "status after restart over a stale socket")
    checks.check("restart over a stale socket", True)

    rc = broker.stop()
    checks.equal("SIGTERM: exit code", rc, 0)
    checks.check("SIGTERM removes the socket file", not os.path.lexists(path))
    r = status(broker)
    checks.check("stopped: exit 1, no eddy is running", r.returncode == 1 and
                 "no eddy is running with data directory %s (no control socket at %s)" % (broker.data_dir, path)
                 in r.stderr, r.stderr)


if __name__ == "__main__":
    eddy_fixture.run_test(body)
