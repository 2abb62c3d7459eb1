"""pytest fixtures of Eddy's integration tests (Debian's python3-pytest under
/usr/bin/python3; ctest runs `/usr/bin/python3 -m pytest -q test_X.py`, one
entry per file, tests/integration/CMakeLists.txt).

    eddy            a started `eddy serve` on 127.0.0.1 (ephemeral port, data
                    directory from tmp_path_factory), one per test module;
                    a module overrides its --override settings by defining
                    an `eddy_overrides` fixture (a dict).
    eddy_factory    make_eddy(overrides=None, start=True, **Broker args) for
                    more brokers (or other configurations) in a module;
                    test_eddy_factory: the same, finished with the test.
    fault_proxy     make_proxy(upstream_port, **FaultProxy args), closed at
                    the end of the module (an eddy_overrides fixture may
                    advertise a proxy's port).
    forward_rig     make_rig(**ForwardRig args): Kafka behind fault proxies
                    and an edge eddy forwarding to it (forward_fixture.py).
    kafka           a started Apache Kafka (kafka_fixture.KafkaCluster), one
                    JVM per test module; a module overrides its arguments
                    with a `kafka_options` fixture (a dict).
    program         the client program CMake built (--program PATH:
                    rdkafka_roundtrip, rdkafka_idempotence).
    artifact_dir    where a test keeps what it shows (--artifact-dir PATH).

Every eddy a fixture started must still run at teardown and stop on SIGTERM
with exit code 0; that is asserted there, as the old harness checked after
every test. A failing test's report carries the tail of every live eddy's
log. Temporary directories come from tmp_path_factory only and are removed
at teardown unless EDDY_KEEP_TMP=1.

Waiting is eddy_fixture.wait_until(condition, timeout, what); proving that
nothing happens is eddy_fixture.stays_true_for / nothing_happens_for.

A file whose tests were all skipped (test_zero_copy.py without strace) ends
with exit code 77, which ctest reports as skipped (SKIP_RETURN_CODE).
"""

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import eddy_fixture  # noqa: E402

SKIPPED_EXIT_CODE = 77


def keep_tmp():
    return os.environ.get("EDDY_KEEP_TMP") == "1"


def pytest_addoption(parser):
    parser.addoption("--program", default=None,
                     help="client program built by CMake (rdkafka_roundtrip, rdkafka_idempotence)")
    parser.addoption("--artifact-dir", default=None, help="directory for screenshots and other artifacts")


@pytest.fixture(scope="session")
def program(request):
    path = request.config.getoption("--program")
    if not path:
        pytest.fail("this test needs --program PATH (tests/integration/CMakeLists.txt passes it)")
    return path


@pytest.fixture(scope="session")
def artifact_dir(request):
    path = request.config.getoption("--artifact-dir") or os.getcwd()
    os.makedirs(path, exist_ok=True)
    return path


# -- eddy -----------------------------------------------------------------

def finish_broker(broker, problems):
    """Stops broker as the end of a test requires: still running, exit code
    0 on SIGTERM. Appends what went wrong to problems, closes it."""
    try:
        if broker.proc is not None:
            if not broker.alive():
                problems.append("eddy (%s) was not running at the end (exit code %s):\n%s"
                                % (broker.tmp, broker.proc.returncode, broker.log_text()[-3000:]))
            else:
                try:
                    rc = broker.stop()
                    if rc != 0:
                        problems.append("eddy (%s) exited with %s on SIGTERM, want 0:\n%s"
                                        % (broker.tmp, rc, broker.log_text()[-3000:]))
                except eddy_fixture.FixtureError as e:
                    problems.append("eddy (%s): %s" % (broker.tmp, e))
    finally:
        broker.close()


class BrokerFactory:
    def __init__(self, tmp_path_factory):
        self.tmp_path_factory = tmp_path_factory
        self.made = []

    def __call__(self, overrides=None, start=True, **kw):
        tmp = self.tmp_path_factory.mktemp("eddy")
        broker = eddy_fixture.Broker(overrides=overrides, tmp=tmp, keep=keep_tmp(), **kw)
        self.made.append(broker)
        if start:
            broker.start()
        return broker

    def finish(self):
        problems = []
        for broker in self.made:
            finish_broker(broker, problems)
        assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def eddy_factory(tmp_path_factory):
    factory = BrokerFactory(tmp_path_factory)
    yield factory
    factory.finish()


@pytest.fixture
def test_eddy_factory(tmp_path_factory):
    """eddy_factory whose brokers end with the test, not the module."""
    factory = BrokerFactory(tmp_path_factory)
    yield factory
    factory.finish()


@pytest.fixture(scope="module")
def eddy_overrides():
    return {}


@pytest.fixture(scope="module")
def eddy(eddy_factory, eddy_overrides):
    return eddy_factory(eddy_overrides)


# -- fault proxy ----------------------------------------------------------

@pytest.fixture(scope="module")
def fault_proxy():
    from fault_proxy import FaultProxy
    made = []

    def make(upstream_port, **kw):
        proxy = FaultProxy(upstream_port, **kw)
        made.append(proxy)
        proxy.start()
        return proxy
    yield make
    for proxy in made:
        proxy.close()


# -- Apache Kafka ---------------------------------------------------------

@pytest.fixture(scope="module")
def kafka_options():
    return {}


@pytest.fixture(scope="module")
def kafka(tmp_path_factory, kafka_options):
    import kafka_fixture
    cluster = kafka_fixture.KafkaCluster(tmp=tmp_path_factory.mktemp("kafka"), **kafka_options)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def forward_rig(tmp_path_factory):
    """make_rig(**forward_fixture.ForwardRig args): a started store-and-
    forward rig (Kafka behind fault proxies, an edge eddy). At teardown every
    Kafka node the test did not stop must still run, and the edge must stop
    cleanly (forward_fixture.finish_rig_problems)."""
    import forward_fixture
    made = []

    def make(**rig_args):
        rig = forward_fixture.ForwardRig(tmp_path_factory=tmp_path_factory, **rig_args)
        made.append(rig)
        rig.start()
        return rig
    yield make
    problems = []
    for rig in made:
        problems += forward_fixture.finish_rig_problems(rig)
    assert not problems, "\n".join(problems)


# -- reports --------------------------------------------------------------

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        import kafka_fixture
        for cluster in list(kafka_fixture.LIVE):
            for i in sorted(cluster.procs):
                report.sections.append(("kafka node %d log (last 2500 characters)" % i, cluster.log_text(i)[-2500:]))
        for broker in list(eddy_fixture.LIVE):
            if broker.log_path:
                text = broker.log_text()
                link_lines = [line for line in text[:-6000].splitlines() if "forward link" in line]
                if link_lines:
                    report.sections.append(("eddy log %s: forward link lines before the tail (last 60)"
                                            % broker.log_path, "\n".join(link_lines[-60:])))
                report.sections.append(("eddy log %s (last 6000 characters)" % broker.log_path, text[-6000:]))


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0:
        return
    stats = reporter.stats
    if stats.get("skipped") and not stats.get("passed") and not stats.get("failed") and not stats.get("error"):
        session.exitstatus = SKIPPED_EXIT_CODE


# Temporary directories: removed when the test run ends, unless kept.
@pytest.fixture(scope="session", autouse=True)
def _remove_tmp(tmp_path_factory):
    yield
    if not keep_tmp():
        shutil.rmtree(tmp_path_factory.getbasetemp(), ignore_errors=True)
    else:
        print("kept", tmp_path_factory.getbasetemp())
