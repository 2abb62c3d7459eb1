"""Provisioning of what the tests download (issue 13): Apache Kafka from
Maven Central (kafka_fixture.classpath()), the newest clients from PyPI, npm
and the Go module proxy (newest_clients.py).

  unreachable_maven  an empty cache and Maven pointed at a repository that
                     refuses connections: classpath() raises KafkaUnavailable
                     naming Maven Central and the repository, in bounded time
  warm_cache         with the cache filled, mvn, npm, go and pip that all
                     fail (shims first on PATH) stop nothing: classpath(),
                     venv_python(), kafkajs() and franz_go() return what they
                     returned before and start no process at all

Each check runs in a fresh Python (a subprocess with its own environment),
so this process's module state and environment stay untouched."""

import json
import os
import socket
import subprocess
import sys
import time

import kafka_fixture
import newest_clients as nc

HERE = os.path.dirname(os.path.abspath(__file__))
INSTALLERS = ("mvn", "npm", "go", "pip")


def run_python(script, env, timeout):
    """script in a fresh /usr/bin/python3 importing the fixtures; its last
    stdout line parsed as JSON."""
    full_env = dict(env, PYTHONPATH=HERE)
    proc = subprocess.run([sys.executable, "-c", script], cwd=HERE, env=full_env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, "child python failed (exit %d):\n%s" % (proc.returncode, proc.stdout[-4000:])
    return json.loads(lines[-1])


UNREACHABLE_SCRIPT = """
import json, time
import kafka_fixture
started = time.monotonic()
try:
    kafka_fixture.classpath()
    outcome = {"raised": None, "message": ""}
except Exception as e:
    outcome = {"raised": type(e).__name__, "message": str(e)}
outcome["seconds"] = time.monotonic() - started
print(json.dumps(outcome))
"""


def test_unreachable_maven(tmp_path):
    # A bound socket that never listens: connections to it are refused, and
    # no other process can take the port while the test runs.
    with socket.socket() as closed_port:
        closed_port.bind(("127.0.0.1", 0))
        repo = "http://127.0.0.1:%d/maven2/" % closed_port.getsockname()[1]
        settings = tmp_path / "settings.xml"
        settings.write_text("<settings><mirrors><mirror><id>unreachable</id><mirrorOf>*</mirrorOf>"
                            "<url>%s</url></mirror></mirrors></settings>\n" % repo)
        cache = tmp_path / "cache"
        env = dict(os.environ, EDDY_TEST_CACHE=str(cache), EDDY_MAVEN_SETTINGS=str(settings),
                   EDDY_MAVEN_TIMEOUT="80")
        outcome = run_python(UNREACHABLE_SCRIPT, env, timeout=100)
    message = outcome["message"]
    assert outcome["raised"] == "KafkaUnavailable", "classpath() raises KafkaUnavailable: %r" % (outcome,)
    assert "Maven Central" in message and "is it reachable" in message, "the error names Maven Central: " + message
    assert "mvn exited" in message and "-s %s" % settings in message, \
        "mvn ran with the test's settings and failed (not a timeout): " + message
    assert repo.rstrip("/") in message, "Maven's output names the repository it could not reach: " + message[-3000:]
    assert outcome["seconds"] < 60, "the failure comes within a bounded time: %.1f s" % outcome["seconds"]
    kafka_dir = cache / ("kafka-" + kafka_fixture.KAFKA_VERSION)
    assert not (kafka_dir / "classpath.txt").exists(), "no classpath is cached after a failed download"


WARM_SCRIPT = """
import json, os, shutil, subprocess, sys
started = []
class RecordingPopen(subprocess.Popen):
    def __init__(self, args, *a, **kw):
        started.append(args if isinstance(args, str) else [str(x) for x in args])
        super().__init__(args, *a, **kw)
subprocess.Popen = RecordingPopen
import kafka_fixture
import newest_clients as nc
found = {name: shutil.which(name) for name in %(installers)r}
node, env = nc.kafkajs()
got = {"classpath": kafka_fixture.classpath(), "venv_python": nc.venv_python(),
       "kafkajs": [node, env["NODE_PATH"]], "franz_go": nc.franz_go()}
during = list(started)
# The probe: a shim is what runs, it fails, and the recorder sees it.
probe = subprocess.run(["mvn", "-v"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(json.dumps({"found": found, "got": got, "during": during, "probe": probe, "recorded": started}))
"""


def make_failing_shims(shim_dir, log):
    for name in INSTALLERS:
        path = shim_dir / name
        path.write_text("#!/bin/sh\necho \"$0 $*\" >> '%s'\nexit 1\n" % log)
        path.chmod(0o755)


def test_warm_cache(tmp_path):
    # Fills the cache if this machine has not yet (then this downloads).
    expected = {
        "classpath": kafka_fixture.classpath(),
        "venv_python": nc.provision("the newest Python clients (venv)", nc.venv_python),
        "kafkajs": list(nc.provision("kafkajs", nc.kafkajs)),
        "franz_go": nc.provision("franz-go", nc.franz_go),
    }
    expected["kafkajs"] = [expected["kafkajs"][0], expected["kafkajs"][1]["NODE_PATH"]]
    shim_dir = tmp_path / "shims"
    shim_dir.mkdir()
    log = tmp_path / "shims.log"
    make_failing_shims(shim_dir, log)
    env = dict(os.environ, PATH="%s:%s" % (shim_dir, os.environ.get("PATH", "")))
    started = time.monotonic()
    outcome = run_python(WARM_SCRIPT % {"installers": INSTALLERS}, env, timeout=60)
    assert outcome["found"] == {name: str(shim_dir / name) for name in INSTALLERS}, \
        "the failing shims come first on PATH: %r" % (outcome["found"],)
    assert outcome["probe"] == 1 and outcome["recorded"][-1] == ["mvn", "-v"], \
        "the shims fail and the recorder sees processes started: %r" % (outcome,)
    assert log.read_text().split() == [str(shim_dir / "mvn"), "-v"], "only the probe ran a shim"
    assert outcome["during"] == [], "a warm cache starts no process: %r" % (outcome["during"],)
    assert outcome["got"] == expected, "the provisioners return the cached installs"
    for path in (outcome["got"]["venv_python"], outcome["got"]["franz_go"], *outcome["got"]["classpath"].split(":")):
        assert os.path.exists(path), "cached file exists: " + path
    assert time.monotonic() - started < 30, "a warm cache answers at once"
