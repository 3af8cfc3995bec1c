"""kcat (Debian's kcat 1.7.1, librdkafka 2.0.2) against `brook serve`: metadata (-L), keyed
produce with Kafka's Java partitioner and consume back (-P/-C), offsets by time (-Q).

    kcat_test.py --brook build/release/tools/brook --work /tmp/x [--records N]
"""
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from brook_broker import Broker, args, check, fail, java_partition, run  # noqa: E402

PARTITIONS = 6


def main():
    a = args()
    records = int(os.environ.get("BROOK_KCAT_RECORDS", "100000"))
    kcat = shutil.which("kcat")
    check(kcat is not None, "kcat is not installed: run ./scripts/deps.sh (Debian package kcat)")
    data = os.path.join(a.work, "data")
    with Broker(a.brook, data, {"num.partitions": str(PARTITIONS)}) as b:
        keyed_roundtrip(kcat, b.address, records)
        metadata(kcat, b.address)
        offsets_by_time(kcat, b.address)
        group_of_three(kcat, b.address, a.work)
    # After a clean stop, a restart serves the same records.
    with Broker(a.brook, data) as b:
        out, _ = run([kcat, "-b", b.address, "-C", "-t", "keyed", "-o", "beginning", "-e", "-q", "-f", "%k\n"])
        check(len(out.splitlines()) == records, f"after a restart {len(out.splitlines())} records, not {records}")
    print(f"kcat: {records} keyed records round-tripped, -L, -Q, restart: ok")


def keyed_roundtrip(kcat, address, records):
    lines = "".join(f"key-{i}\tvalue-{i}\n" for i in range(records)).encode()
    t0 = time.monotonic()
    run([kcat, "-b", address, "-P", "-t", "keyed", "-K", "\t", "-X", "partitioner=murmur2_random",
         "-X", "acks=all"], input=lines)
    produced = time.monotonic() - t0
    out, _ = run([kcat, "-b", address, "-C", "-t", "keyed", "-o", "beginning", "-e", "-q",
                  "-f", "%p\t%o\t%k\t%s\n"])
    got = [l.split("\t") for l in out.splitlines()]
    check(len(got) == records, f"consumed {len(got)} records, produced {records}")
    next_offset = [0] * PARTITIONS
    last_index = [-1] * PARTITIONS
    seen = set()
    for p, o, k, v in got:
        p, o = int(p), int(o)
        i = int(k.split("-")[1])
        check(v == f"value-{i}", f"key {k} came back with value {v!r}")
        want = java_partition(k.encode(), PARTITIONS)
        check(p == want, f"key {k} is in partition {p}; Kafka's partitioner picks {want}")
        check(o == next_offset[p], f"partition {p}: offset {o}, expected {next_offset[p]}")
        check(i > last_index[p], f"partition {p}: key {k} after key-{last_index[p]} (producer order lost)")
        next_offset[p] += 1
        last_index[p] = i
        seen.add(i)
    check(len(seen) == records, f"{records - len(seen)} keys missing or duplicated")
    check(all(n > 0 for n in next_offset), f"some partition got no record: {next_offset}")
    print(f"  produced {records} in {produced:.2f} s; per partition {next_offset}")


def metadata(kcat, address):
    out, _ = run([kcat, "-b", address, "-L", "-J"])
    md = json.loads(out)
    brokers = md["brokers"]
    check(len(brokers) == 1 and brokers[0]["name"] == address, f"-L brokers: {brokers}")
    check(md["controllerid"] == brokers[0]["id"], f"-L controller {md['controllerid']}")
    topics = {t["topic"]: t for t in md["topics"]}
    check("keyed" in topics, f"-L topics: {sorted(topics)}")
    parts = topics["keyed"]["partitions"]
    check(len(parts) == PARTITIONS, f"-L: keyed has {len(parts)} partitions")
    for p in parts:
        me = [{"id": brokers[0]["id"]}]
        check(p["leader"] == brokers[0]["id"] and p["replicas"] == me and p["isrs"] == me, f"-L partition {p}")
    # A topic named in -L -t is created with num.partitions (auto.create.topics.enable).
    out, _ = run([kcat, "-b", address, "-L", "-J", "-t", "made-by-metadata"])
    t = json.loads(out)["topics"][0]
    check(t["topic"] == "made-by-metadata" and len(t["partitions"]) == PARTITIONS and "error" not in t,
          f"-L -t on a new topic: {t}")


def offsets_by_time(kcat, address):
    # Records stamped now: the earliest offset for time 1 is 0, for a time far ahead none
    # (librdkafka prints -1), and the end offset is the log end.
    out, _ = run([kcat, "-b", address, "-Q", "-t", "keyed:0:1"])
    check("offset 0" in out, f"-Q keyed:0:1 printed {out!r}")
    ahead = int(time.time() * 1000) + 3_600_000
    out, _ = run([kcat, "-b", address, "-Q", "-t", f"keyed:0:{ahead}"])
    check("offset -1" in out, f"-Q for a time an hour ahead printed {out!r}")
    out, _ = run([kcat, "-b", address, "-Q", "-t", "keyed:0:-1"])
    end = int(out.strip().rsplit(" ", 1)[1])
    check(end > 0, f"-Q keyed:0:-1 printed {out!r}")


def group_of_three(kcat, address, work):
    """Three `kcat -G` members split six partitions; one is killed with SIGKILL and its two
    partitions move to the others after its session timeout; what is produced then reaches
    the two survivors."""
    import re
    import signal
    import subprocess

    lines = "".join(f"g-{i}\tbefore\n" for i in range(600)).encode()
    run([kcat, "-b", address, "-P", "-t", "grouped", "-K", "\t"], input=lines)
    members = []
    for i in range(3):
        out = open(os.path.join(work, f"member{i}.out"), "wb")
        err = open(os.path.join(work, f"member{i}.err"), "wb")
        members.append((subprocess.Popen([kcat, "-b", address, "-G", "kg", "grouped", "-o", "beginning", "-u",
                                          "-f", "%p\t%k\t%s\n", "-X", "session.timeout.ms=6000",
                                          "-X", "heartbeat.interval.ms=500"], stdout=out, stderr=err), out, err))
    pattern = re.compile(r"rebalanced \(memberid [^)]*\): assigned: (.*)$")

    def assignments():
        """Each member's latest assignment, as a set of partitions (None before its first)."""
        result = []
        for i in range(3):
            with open(os.path.join(work, f"member{i}.err")) as f:
                last = None
                for line in f:
                    m = pattern.search(line)
                    if m:
                        last = {int(p) for p in re.findall(r"\[(\d+)\]", m.group(1))}
                result.append(last)
        return result

    def consumed(i):
        with open(os.path.join(work, f"member{i}.out")) as f:
            return [l.rstrip("\n").split("\t") for l in f if l.strip()]

    def wait_for(cond, what, seconds=30):
        deadline = time.monotonic() + seconds
        while not cond():
            if time.monotonic() > deadline:
                for p, _, _ in members:
                    p.kill()
                fail(f"kcat -G: {what} within {seconds} s; assignments {assignments()}")
            time.sleep(0.2)

    try:
        wait_for(lambda: all(a is not None and len(a) == 2 for a in assignments())
                 and set().union(*assignments()) == set(range(6)), "three members did not get two partitions each")
        wait_for(lambda: sum(len(consumed(i)) for i in range(3)) >= 600, "the group did not read 600 records")
        members[0][0].kill()  # SIGKILL: no LeaveGroup, the session timeout finds it
        wait_for(lambda: (lambda a: a[1] is not None and a[2] is not None and a[1] | a[2] == set(range(6))
                          and not a[1] & a[2])(assignments()), "the killed member's partitions did not move")
        lines = "".join(f"g-{i}\tafter\n" for i in range(600)).encode()
        run([kcat, "-b", address, "-P", "-t", "grouped", "-K", "\t"], input=lines)
        wait_for(lambda: sum(1 for i in (1, 2) for r in consumed(i) if r[2] == "after") >= 600,
                 "the survivors did not read the 600 records produced after the kill")
    finally:
        for p, out, err in members:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
            out.close()
            err.close()
    after = {r[1] for i in (1, 2) for r in consumed(i) if r[2] == "after"}
    check(len(after) == 600, f"the survivors read {len(after)} distinct records of the 600 produced after the kill")
    print(f"  kcat -G: 3 members split 6 partitions; after a SIGKILL the 2 others took them over: {assignments()[1:]}")


if __name__ == "__main__":
    main()
