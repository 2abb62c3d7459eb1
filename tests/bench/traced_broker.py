"""The broker the by-hand perf scripts trace (syscalls_per_record.py,
durable_path_trace.py): their tools checked, and an Eddy on the gateway
config (127.0.0.1, an ephemeral port, a temporary data directory) started
for the script and stopped, its data removed, when it ends. Test-only."""
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench_limits import free_port, port_listening

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bench_tools(build, script):
    """(eddy, raw_e2e, rdkafka_bench) of build, or None after saying on
    stderr what is missing (one of them, or perf)."""
    tools = (os.path.join(build, "eddy"), os.path.join(build, "tests", "bench", "raw_e2e"),
             os.path.join(build, "tests", "bench", "rdkafka_bench"))
    for tool in tools:
        if not os.access(tool, os.X_OK):
            print("%s: %s is missing (build the bench targets first)" % (script, tool), file=sys.stderr)
            return None
    if shutil.which("perf") is None:
        print("%s: perf is missing (Debian: apt-get install linux-perf)" % script, file=sys.stderr)
        return None
    return tools


class BrokerDidNotStart(Exception):
    pass


@contextlib.contextmanager
def gateway_broker(eddy, prefix, deadline_s=20):
    """Yields (process, bootstrap, work directory) once the broker listens;
    raises BrokerDidNotStart (naming its log) when it does not within
    deadline_s."""
    work = tempfile.mkdtemp(prefix=prefix)
    port = free_port()
    bootstrap = "127.0.0.1:%d" % port
    log = open(os.path.join(work, "eddy.log"), "w")
    proc = subprocess.Popen([eddy, "serve", os.path.join(SOURCE, "config", "gateway.properties"),
                             "--override", "listeners=PLAINTEXT://" + bootstrap,
                             "--override", "log.dirs=" + os.path.join(work, "data")],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        end = time.monotonic() + deadline_s
        while not port_listening(port):
            if proc.poll() is not None or time.monotonic() > end:
                log.flush()
                with open(log.name) as f:
                    raise BrokerDidNotStart("the broker did not start: %s" % f.read()[-2000:].strip())
            time.sleep(0.05)
        yield proc, bootstrap, work
    finally:
        proc.terminate()
        proc.wait()
        log.close()
        shutil.rmtree(work, ignore_errors=True)
