"""The library-free bench clients (tests/bench/raw_e2e.c, raw_fetch.c),
and rdkafka_bench's e2e where they share a rule, against a real eddy:
what `make bench` reports from them must be real figures, so each must
deliver every record, count what it read (and only this run's), and fail
(exit 1, its error on stderr) rather than print numbers when the broker
refuses it. --program is raw_e2e; raw_fetch, rdkafka_bench,
sync_floor (the disk-mode latency rows' open-loop floor) and sync_handoff
(write_path.md's hand-off costs) are built beside it.

Also bench_measure.measure: a latency client's -1 percentile (no sample)
must not be kept as a figure."""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
from bench_measure import ClientFailed, measure, parse_result  # noqa: E402


def create(eddy, topic, *configs):
    args = [eddy.bin, "topics", "--bootstrap-server", eddy.bootstrap, "--create", "--topic", topic,
            "--partitions", "1"]
    for c in configs:
        args += ["--config", c]
    r = subprocess.run(args, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr


def run(argv, timeout=60):
    r = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout)
    return r.returncode, parse_result(r.stdout), r.stderr


@pytest.mark.parametrize("mode, acks", [("disk", "1"), ("disk", "all"), ("page-cache", "all")])
def test_raw_e2e_delivers_every_record_and_times_it(eddy, program, mode, acks):
    topic = "e2e-%s-%s" % (mode, acks)
    create(eddy, topic, "eddy.acks.all.waits.for=" + mode)
    rc, v, err = run([program, eddy.bootstrap, topic, 500, 2, 1024, acks])
    assert rc == 0, err
    assert v["msgs"] == 1000 and v["errors"] == 0
    assert 0 < v["e2e_p50_us"] <= v["e2e_p99_us"] <= v["e2e_p999_us"] < 5e6
    assert 0 < v["ack_p50_us"] <= v["ack_p99_us"]
    # Then raw_fetch reads the same topic: the priming record and the 1 000.
    rc, v, err = run([os.path.join(os.path.dirname(program), "raw_fetch"), eddy.bootstrap, topic, 1001, 1024])
    assert rc == 0, err
    assert v["msgs"] == 1001 and v["errors"] == 0


@pytest.mark.parametrize("client", ["raw_e2e", "rdkafka_bench"])
def test_an_earlier_run_on_the_same_topic_is_not_timed(eddy, program, client):
    # Both clients read the topic from its start: an earlier run's records
    # are there, stamped seconds ago. Counted, they would be this run's
    # figures (its p50 alone would be the pause between the runs).
    topic = "e2e-again-" + client
    create(eddy, topic, "eddy.acks.all.waits.for=disk")
    tool = os.path.join(os.path.dirname(program), client)
    argv = [tool, eddy.bootstrap, topic, 500, 1, 1024, "all"]
    if client == "rdkafka_bench":
        argv.insert(1, "e2e")
    rc, v, err = run(argv)
    assert rc == 0 and v["msgs"] == 500, err
    time.sleep(4)
    rc, v, err = run(argv)
    assert rc == 0, err
    assert v["msgs"] == 500 and v["errors"] == 0
    assert 0 < v["e2e_p50_us"] <= v["e2e_p999_us"] < 3e6


def test_raw_e2e_waits_for_a_topic_being_created(eddy, program):
    # Kafka creates a topic asynchronously: the first produce and fetch may
    # be refused with a retriable error; the client retries them before its
    # clock starts.
    timer = threading.Timer(1.0, create, (eddy, "e2e-late"))
    timer.start()
    try:
        rc, v, err = run([program, eddy.bootstrap, "e2e-late", 200, 1, 1024, "1"])
    finally:
        timer.join()
    assert rc == 0, err
    assert v["msgs"] == 200 and v["errors"] == 0


def test_raw_clients_fail_cleanly_on_what_the_broker_refuses(eddy, program):
    # raw_fetch of a topic that does not exist: the broker's error, exit 1.
    rc, v, err = run([os.path.join(os.path.dirname(program), "raw_fetch"), eddy.bootstrap, "nosuch", 10, 1024])
    assert rc == 1 and "fetch error 3" in err and v["msgs"] == 0
    # Records larger than the topic takes (max.message.bytes): the priming
    # record is refused for good, so the run ends at once, every record
    # counted as an error, exit 1; the broker keeps serving.
    create(eddy, "e2e-big", "max.message.bytes=512")
    rc, v, err = run([program, eddy.bootstrap, "e2e-big", 10, 1, 1024, "1"], timeout=20)
    assert rc == 1 and v["errors"] == 10 and "error 10" in err
    # Nothing listening, and arguments out of range.
    rc, _, err = run([program, "127.0.0.1:1", "t", 10, 1, 1024, "1"])
    assert rc == 1 and "connect" in err
    for bad in ([program, eddy.bootstrap, "t", 0, 1, 1024, "1"], [program, eddy.bootstrap, "t", 10, 1, 8, "1"],
                [program, eddy.bootstrap, "t", 10, 1, 1024, "2"],
                [program, eddy.bootstrap, "t", 2000000000, 2000000000, 1024, "1"]):
        assert run(bad)[0] == 2
    create(eddy, "e2e-after")
    rc, v, err = run([program, eddy.bootstrap, "e2e-after", 200, 1, 1024, "all"])
    assert rc == 0 and v["msgs"] == 200, err


def test_sync_floor_times_every_record_to_its_sync(program, tmp_path):
    # The disk-mode latency rows' open-loop floor: no broker, only a file,
    # a paced writer and a group-commit sync thread.
    tool = os.path.join(os.path.dirname(program), "sync_floor")
    rc, v, err = run([tool, tmp_path, 500, 1, 1024])
    assert rc == 0, err
    assert v["msgs"] == 500 and v["errors"] == 0 and 1 <= v["syncs"] <= 500
    assert 0 < v["e2e_p50_us"] <= v["e2e_p99_us"] <= v["e2e_p999_us"]
    assert 0 < v["sync_p50_us"] <= v["sync_p99_us"] <= v["sync_p999_us"]
    assert os.listdir(tmp_path) == []  # its file is removed
    rc, _, err = run([tool, tmp_path / "nosuch", 10, 1, 1024])
    assert rc == 1 and "No such file or directory" in err
    for bad in ([tool, tmp_path, 0, 1, 1024], [tool, tmp_path, 10, 0, 1024], [tool, tmp_path, 10, 1, 0],
                [tool, tmp_path, 1000000, 3600, 1024], [tool, tmp_path, 10, 1]):
        assert run(bad)[0] == 2
    assert os.listdir(tmp_path) == []


def test_sync_handoff_times_each_way_of_syncing(program, tmp_path):
    # What a hand-off around a sync costs (write_path.md): the loop's own
    # fdatasync, a sync thread's, io_uring's when built with liburing and
    # the kernel allows it (else said to be unavailable, not measured).
    tool = os.path.join(os.path.dirname(program), "sync_handoff")
    r = subprocess.run([tool, str(tmp_path), "500", "1", "1024", "1", "2"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    runs, medians, unavailable = {}, {}, []
    for line in r.stdout.splitlines():
        if " unavailable: " in line:
            unavailable.append(line.split()[0])
            continue
        v = dict(kv.split("=", 1) for kv in line.split())
        (runs.setdefault(v["mode"], []) if "round" in v else medians.setdefault(v["mode"], [])).append(v)
    assert set(runs) | {m.split("=")[1] for m in unavailable} == {"loop", "thread", "uring"}
    for mode, rounds in runs.items():
        assert [v["round"] for v in rounds] == ["1", "2"] and all(v["busy"] == "1" for v in rounds)
        for v in rounds:
            assert v["msgs"] == "500"
            assert 0 < int(v["p50_us"]) <= int(v["p90_us"]) <= int(v["p99_us"]) <= int(v["max_us"])
        assert len(medians[mode]) == 1 and 0 < int(medians[mode][0]["median_p50_us"])
    assert os.listdir(tmp_path) == []  # its file is removed
    r = subprocess.run([tool, str(tmp_path / "nosuch"), "10", "1", "1024", "0", "1"], capture_output=True, text=True)
    assert r.returncode == 1 and "No such file or directory" in r.stderr
    for bad in (["0", "1", "1024", "0", "1"], ["10", "0", "1024", "0", "1"], ["10", "1", "0", "0", "1"],
                ["10", "1", "1024", "-1", "1"], ["10", "1", "1024", "0", "0"], ["100000", "3600", "1024", "0", "1"],
                ["10", "1", "1024", "0"], ["10", "1", "1024", "0", "1", "20"], ["10", "1", "1024", "0", "1", "-21"],
                ["10", "1", "1024", "0", "1", "x"], ["10", "1", "1024", "0", "1", "5x"]):
        r = subprocess.run([tool, str(tmp_path)] + bad, capture_output=True, text=True)
        assert r.returncode == 2, bad
    assert os.listdir(tmp_path) == []
    # SYNC_NICE: the sync thread's nice value, shown on the thread mode's
    # lines only; a higher one needs no privilege.
    r = subprocess.run([tool, str(tmp_path), "200", "1", "1024", "0", "1", "5"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    nices = {v["mode"]: v["sync_nice"] for v in (dict(kv.split("=", 1) for kv in line.split())
                                                 for line in r.stdout.splitlines() if " unavailable: " not in line)}
    assert nices["thread"] == "5" and nices["loop"] == "0"
    # A lower one refused (no CAP_SYS_NICE): exit 1, said, the file removed.
    if os.geteuid() == 0 and shutil.which("setpriv"):
        # pytest's tmp_path and the build directory may be root's alone: the
        # tool runs from a copy in a directory anyone may use.
        shared = tempfile.mkdtemp(prefix="sync-handoff-")
        try:
            os.chmod(shared, 0o777)
            copy = shutil.copy(tool, os.path.join(shared, "sync_handoff"))
            r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", copy, shared, "200",
                                "1", "1024", "0", "1", "-5"], capture_output=True, text=True, timeout=60)
            assert r.returncode == 1 and "nice -5: Permission denied" in r.stderr, r.stderr
            assert os.listdir(shared) == ["sync_handoff"]
        finally:
            shutil.rmtree(shared, ignore_errors=True)
    assert os.listdir(tmp_path) == []


def test_a_percentile_with_no_sample_is_not_a_figure():
    def no_samples(i, warmup):
        raise ClientFailed("raw_e2e exited 1", parse_result(
            "latency msgs=0 ack_p50_us=-1 ack_p99_us=-1 ack_p999_us=-1 e2e_p50_us=-1 e2e_p99_us=-1 "
            "e2e_p999_us=-1 errors=100\n"))
    series = measure("no samples", no_samples, 2, log=lambda *a: None)
    assert series.runs == [] and len(series.failures) == 2
    assert all(not any(k.endswith("_us") for k in f) for f in series.failures)
