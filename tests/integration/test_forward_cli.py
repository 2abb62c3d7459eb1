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
import tempfile
import threading

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


def main():
    checks = eddy_fixture.Checks()
    if not EDDY or not SRC:
        raise SystemExit("EDDY_BIN and EDDY_SOURCE_DIR must be set (run through ctest)")
    tmp = tempfile.mkdtemp(prefix="eddy-fwd-")
    try:
        run_checks(checks, tmp)
    finally:
        subprocess.run(["rm", "-rf", tmp])
    checks.finish()


def run_checks(checks, tmp):
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    sock_path = os.path.join(data, "eddy.sock")

    # -- usage errors: exit 2, message and usage on stderr -------------------
    for name, args, message in [
        ("unknown option", ["status", "--bogus"], "unknown option '--bogus'"),
        ("missing command", [], "missing command"),
        ("unknown command", ["stats"], "unknown command 'stats'"),
        ("--watch 0", ["status", "--data-dir", data, "--watch", "0"], "--watch: expected an integer"),
        ("--watch not a number", ["status", "--data-dir", data, "--watch", "x"], "--watch: expected an integer"),
        ("--data-dir without value", ["status", "--data-dir"], "needs a value"),
        ("--data-dir with --config", ["status", "--data-dir", data, "--config", "x.properties"], "not both"),
        ("stray argument", ["status", data], "unexpected argument"),
        ("bad override", ["status", "--override", "no.such.key=1"], "no.such.key: unknown configuration key"),
        ("missing config file", ["status", "--config", os.path.join(tmp, "none.properties")], "cannot read"),
    ]:
        r = eddy("forward", *args)
        checks.check("%s: exit 2 with message" % name, r.returncode == 2 and message in r.stderr and r.stdout == "",
                     "rc=%d stdout=%r stderr=%r" % (r.returncode, r.stdout, r.stderr[:300]))
    r = eddy("forward", "status", "--bogus")
    checks.check("usage printed with a usage error", "Usage: eddy forward status" in r.stderr, r.stderr[:300])
    for args in (["--help"], ["status", "--help"]):
        r = eddy("forward", *args)
        checks.check("eddy forward %s: exit 0, usage on stdout" % " ".join(args),
                     r.returncode == 0 and "Usage: eddy forward status" in r.stdout and "--watch" in r.stdout,
                     "rc=%d %r" % (r.returncode, r.stdout[:300]))
    r = eddy("help")
    checks.check("eddy help lists forward status", "eddy forward status" in r.stdout, r.stdout[:300])

    # -- nothing running: exit 1 -------------------------------------------
    want = "no eddy is running with data directory %s (no control socket at %s)" % (data, sock_path)
    r = eddy("forward", "status", "--data-dir", data)
    checks.check("no socket: exit 1 naming the data directory", r.returncode == 1 and want in r.stderr,
                 "rc=%d stderr=%r" % (r.returncode, r.stderr))
    missing = os.path.join(tmp, "nowhere")
    r = eddy("forward", "status", "--data-dir", missing)
    checks.check("missing data directory: exit 1", r.returncode == 1 and
                 ("no eddy is running with data directory " + missing) in r.stderr, r.stderr)
    # The data directory from the config file and overrides, as eddy serve reads it.
    config = os.path.join(SRC, "config", "gateway.properties")
    r = eddy("forward", "status", "--config", config, "--override", "log.dirs=" + data)
    checks.check("--config/--override: the socket under log.dirs", r.returncode == 1 and want in r.stderr,
                 "rc=%d stderr=%r" % (r.returncode, r.stderr))
    r = subprocess.run([EDDY, "forward", "status"], cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=30)
    checks.check("no flags: the default data directory ./data", r.returncode == 1 and
                 "no eddy is running with data directory ./data (no control socket at ./data/eddy.sock)" in r.stderr,
                 "rc=%d stderr=%r" % (r.returncode, r.stderr))

    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(sock_path)
    stale.close()  # the file stays; nobody listens: a killed eddy leaves this
    r = eddy("forward", "status", "--data-dir", data)
    checks.check("stale socket: exit 1", r.returncode == 1 and
                 ("no eddy is running with data directory %s (stale control socket at %s" % (data, sock_path))
                 in r.stderr, "rc=%d stderr=%r" % (r.returncode, r.stderr))
    os.unlink(sock_path)

    long_dir = os.path.join(tmp, "d" * 120)
    r = eddy("forward", "status", "--data-dir", long_dir)
    want = "'%s/eddy.sock' is %d bytes long; this system allows at most 107" % (long_dir, len(long_dir) + 10)
    checks.check("socket path too long: exit 1 naming path and limit", r.returncode == 1 and want in r.stderr,
                 r.stderr)

    # -- replies from a (stand-in) running eddy ------------------------------
    table = "LINK     STATE  LAG\ncentral  up     0\n"
    replies = {
        "forward status": "ok\n" + table,
        "forward status json": 'ok\n{"links": [{"name": "central", "state": "up", "lag": 0}]}',
    }
    server = FakeControlServer(sock_path, lambda c: replies.get(c, "error: unknown command\n"))
    try:
        r = eddy("forward", "status", "--data-dir", data)
        checks.equal("ok reply: body on stdout", (r.returncode, r.stdout, r.stderr), (0, table, ""))
        r = eddy("forward", "status", "--data-dir", data + "/")
        checks.equal("trailing slash on --data-dir", (r.returncode, r.stdout), (0, table))
        r = eddy("forward", "status", "--data-dir", data, "--json")
        checks.equal("--json: body (newline added) on stdout", (r.returncode, r.stdout, r.stderr),
                     (0, '{"links": [{"name": "central", "state": "up", "lag": 0}]}\n', ""))
        checks.equal("commands sent", server.seen(), ["forward status", "forward status", "forward status json"])

        replies["forward status"] = "error: forwarding is not configured\n"
        r = eddy("forward", "status", "--data-dir", data)
        checks.equal("error reply: exit 1, reason on stderr", (r.returncode, r.stdout, r.stderr),
                     (1, "", "eddy forward: forwarding is not configured\n"))
        replies["forward status"] = "garbage"
        r = eddy("forward", "status", "--data-dir", data)
        checks.check("reply in neither form: exit 1", r.returncode == 1 and "unexpected reply 'garbage'" in r.stderr,
                     r.stderr)
        replies["forward status"] = ""
        r = eddy("forward", "status", "--data-dir", data)
        checks.check("no reply: exit 1", r.returncode == 1 and "without a reply" in r.stderr, r.stderr)

        replies["forward status"] = "ok\n" + table
        before = len(server.seen())
        watch = subprocess.Popen([EDDY, "forward", "status", "--data-dir", data, "--watch", "1"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            eddy_fixture.wait_until(lambda: len(server.seen()) >= before + 3, 20, "three --watch rounds")
        finally:
            watch.send_signal(signal.SIGINT)
            out, err = watch.communicate(timeout=10)
        checks.check("--watch: rounds separated by a screen clear", out.count(CLEAR) >= 3 and
                     out.count(table) >= 3 and out.startswith(CLEAR + "Every 1s: eddy forward status"),
                     repr(out[:400]))
        checks.check("--watch ends on SIGINT", watch.returncode == -signal.SIGINT, watch.returncode)
    finally:
        server.close()


if __name__ == "__main__":
    main()
