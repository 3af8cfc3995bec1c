"""kcat (Debian's kcat 1.7.1, librdkafka 2.0.2) against `brook serve`.

Scenarios (--scenario):
  roundtrip    metadata (-L), keyed produce with Kafka's Java partitioner and consume back
               (-P/-C), offsets by time (-Q), a group of three (-G), a restart
  compression  seeded random records produced with -z gzip, snappy, lz4 and zstd, consumed
               back, then the stored batches read from the segment files: each codec's batches
               are kept compressed with that codec, CRCs intact; a restart serves them again
  all          both

    kcat_test.py --brook build/release/tools/brook --work /tmp/x --scenario compression
    BROOK_KCAT_RECORDS=N (roundtrip, 100000), BROOK_KCAT_COMPRESSION_RECORDS=N (per codec,
    2000), BROOK_KCAT_SEED=N (compression: replays a seed it printed)
"""
import json
import os
import random
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from brook_broker import Broker, args, check, fail, java_partition, run  # noqa: E402
from segments import CODECS, batches  # noqa: E402

PARTITIONS = 6


def main():
    a = args()
    kcat = shutil.which("kcat")
    check(kcat is not None, "kcat is not installed: run ./scripts/deps.sh (Debian package kcat)")
    check(a.scenario in ("all", "roundtrip", "compression"), f"unknown scenario {a.scenario}")
    if a.scenario in ("all", "roundtrip"):
        roundtrip(a.brook, kcat, os.path.join(a.work, "roundtrip"))
    if a.scenario in ("all", "compression"):
        compression(a.brook, kcat, os.path.join(a.work, "compression"))


def roundtrip(brook, kcat, work):
    os.makedirs(work)
    records = int(os.environ.get("BROOK_KCAT_RECORDS", "100000"))
    data = os.path.join(work, "data")
    with Broker(brook, data, {"num.partitions": str(PARTITIONS)}) as b:
        keyed_roundtrip(kcat, b.address, records)
        metadata(kcat, b.address)
        offsets_by_time(kcat, b.address)
        group_of_three(kcat, b.address, work)
    # After a clean stop, a restart serves the same records.
    with Broker(brook, data) as b:
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


COMPRESSION_PARTITIONS = 3
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
EVENTS = ["view", "click", "purchase", "refund", "signup"]
NOISE = "".join(chr(c) for c in range(33, 127))


def random_records(rng, codec, n):
    """n (key, value) pairs of printable ASCII without tabs or newlines (kcat's delimiters):
    most values JSON-like and compressible, some random noise, some long runs (a few KiB, so
    that batches span several of librdkafka's 64 KiB lz4 blocks)."""
    out = []
    for i in range(n):
        key = f"{codec}-{i}-{''.join(rng.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(rng.randrange(1, 12)))}"
        kind = rng.random()
        if kind < 0.6:
            value = json.dumps({"id": i, "user": f"user-{rng.randrange(100)}", "event": rng.choice(EVENTS),
                                "amount": rng.randrange(10**6) / 100,
                                "tags": rng.sample(WORDS, rng.randrange(0, 4)),
                                "note": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 30)))})
        elif kind < 0.85:
            value = "".join(rng.choice(NOISE) for _ in range(rng.randrange(1, 300)))
        else:
            value = rng.choice(WORDS) * rng.randrange(1, 800)
        out.append((key, value))
    return out


def compression(brook, kcat, work):
    """For each codec, kcat -z CODEC produces seeded random keyed records; kcat reads them back
    (every key, value, partition and offset checked); after a SIGTERM the segment files are
    read: every batch's CRC holds and each batch has the codec librdkafka sent. A restarted
    broker serves the same records again.

    librdkafka 2.0.2 compresses gzip, snappy and lz4 only for a broker whose Produce versions
    include v0 (it asks for Produce 0..0, librdkafka issue #4956, fixed in 2.11), and zstd for
    one with Produce v7+ and Fetch v10+. brook serves Produce from v3, as Kafka 4.0 does
    (KIP-896), and, as Kafka 4.0 does (KAFKA-18659), advertises it from v0 for that reason:
    the check requires the advertised v0 and a batch of the codec for every codec. Then
    `brook produce --compression` writes each codec's batches into the data directory and
    kcat reads them back through the broker: librdkafka decompressing all four codecs as
    brook stored them."""
    os.makedirs(work)
    n = int(os.environ.get("BROOK_KCAT_COMPRESSION_RECORDS", "2000"))
    # The same seed every run (CI covers the same cases), shifted by BROOK_SEED_BASE as every
    # seeded test is (tests/support/seeds.hpp).
    base = os.environ.get("BROOK_SEED_BASE", "0")
    seed = int(os.environ.get("BROOK_KCAT_SEED", str(1 + (int(base) if base.isdigit() else 0))))
    print(f"  compression: seed {seed} (replay: BROOK_KCAT_SEED={seed})", flush=True)
    rng = random.Random(seed)
    data = os.path.join(work, "data")
    codecs = ["gzip", "snappy", "lz4", "zstd"]
    produced = {c: random_records(rng, c, n) for c in codecs}
    consumed = {}
    t0 = time.monotonic()
    # A topic whose compression.type is fixed: what kcat sends (gzip, or nothing) is stored lz4.
    os.makedirs(data, exist_ok=True)
    run([brook, "topics", "--data-dir", data, "--create", "--topic", "fixed-lz4", "--partitions",
         str(COMPRESSION_PARTITIONS), "--config", "compression.type=lz4"])
    fixed = {z: random_records(rng, f"fixed-{z}", n // 4) for z in ("gzip", "none")}
    with Broker(brook, data, {"num.partitions": str(COMPRESSION_PARTITIONS)}) as b:
        produce_versions = advertised_versions(kcat, b.address, "Produce")
        check(produce_versions[0] == 0, f"brook serve advertises Produce v{produce_versions[0]}-"
              f"{produce_versions[1]}; librdkafka 2.0.2 compresses gzip, snappy and lz4 only from v0")
        for c in codecs:
            topic = f"z-{c}"
            lines = "".join(f"{k}\t{v}\n" for k, v in produced[c]).encode()
            run([kcat, "-b", b.address, "-P", "-t", topic, "-K", "\t", "-z", c, "-X", "partitioner=murmur2_random",
                 "-X", "acks=all", "-X", "linger.ms=20"], input=lines)
            consumed[c] = consume_all(kcat, b.address, topic)
            check_records(f"-z {c}", produced[c], consumed[c])
        sent_fixed = []
        for z, recs in fixed.items():
            lines = "".join(f"{k}\t{v}\n" for k, v in recs).encode()
            run([kcat, "-b", b.address, "-P", "-t", "fixed-lz4", "-K", "\t", "-z", z, "-X",
                 "partitioner=murmur2_random", "-X", "acks=all", "-X", "linger.ms=20"], input=lines)
            sent_fixed += recs
        check_records("a compression.type=lz4 topic fed gzip and uncompressed batches", sent_fixed,
                      consume_all(kcat, b.address, "fixed-lz4"))
    for c in codecs:
        check_stored(data, f"z-{c}", c, n, f"kcat -z {c} (Produce v{produce_versions[0]}-{produce_versions[1]})")
    check_stored(data, "fixed-lz4", "lz4", len(sent_fixed), "compression.type=lz4 (recompressed on append)", every=True)
    brook_written = True
    if brook_written:
        for c in codecs:
            topic = f"b-{c}"
            run([brook, "topics", "--data-dir", data, "--create", "--topic", topic,
                 "--partitions", str(COMPRESSION_PARTITIONS)])
            lines = "".join(f"{k}\t{v}\n" for k, v in produced[c]).encode()
            run([brook, "produce", "--data-dir", data, "--topic", topic, "--key-separator", "\t",
                 "--compression", c], input=lines)
            check_stored(data, topic, c, n, f"brook produce --compression {c}", every=True)
    with Broker(brook, data) as b:
        for c in codecs:
            again = consume_all(kcat, b.address, f"z-{c}")
            # Partitions interleave differently from one read to the next: compare as sets of lines.
            check(sorted(again) == sorted(consumed[c]), f"-z {c}: after a restart kcat read other records than before")
            if brook_written:
                check_records(f"brook produce --compression {c}, read by kcat", produced[c],
                              consume_all(kcat, b.address, f"b-{c}"))
    print(f"kcat: {n} records each with -z {', '.join(codecs)} round-tripped (seed {seed}), restart"
          + (", brook-compressed batches of each codec read by kcat" if brook_written else
             "; `brook produce` has no --compression: brook-compressed batches not read by kcat")
          + f": ok ({time.monotonic() - t0:.1f} s)")


def advertised_versions(kcat, address, api):
    """(min, max) of the versions of `api` the broker advertises, as librdkafka logs them."""
    import re
    _, err = run([kcat, "-b", address, "-L", "-d", "feature"])
    m = re.search(rf"ApiKey {api} \(\d+\) Versions (\d+)\.\.(\d+)", err)
    check(m is not None, f"kcat -L -d feature logged no versions for {api}: {err[-1500:]}")
    return int(m.group(1)), int(m.group(2))


def brook_produce_has_compression(brook):
    out, _ = run([brook, "produce", "--help"])
    return "--compression" in out


def consume_all(kcat, address, topic):
    out, _ = run([kcat, "-b", address, "-C", "-t", topic, "-o", "beginning", "-e", "-q",
                  "-f", "%p\t%o\t%k\t%s\n"])
    return out.splitlines()


def check_records(what, produced, lines):
    """Every produced record came back once, with its value, in the partition Kafka's Java
    partitioner picks for its key, at consecutive offsets from 0 in production order."""
    check(len(lines) == len(produced), f"{what}: consumed {len(lines)} records, produced {len(produced)}")
    index = {k: i for i, (k, _) in enumerate(produced)}
    next_offset = [0] * COMPRESSION_PARTITIONS
    last_index = [-1] * COMPRESSION_PARTITIONS
    seen = set()
    for line in lines:
        p, o, k, v = line.split("\t", 3)
        p, o = int(p), int(o)
        check(k in index, f"{what}: consumed a key nobody produced: {k!r}")
        i = index[k]
        check(v == produced[i][1], f"{what}: key {k} came back with value {v[:80]!r}, not {produced[i][1][:80]!r}")
        want = java_partition(k.encode(), COMPRESSION_PARTITIONS)
        check(p == want, f"{what}: key {k} is in partition {p}; Kafka's partitioner picks {want}")
        check(o == next_offset[p], f"{what}: partition {p}: offset {o}, expected {next_offset[p]}")
        check(i > last_index[p], f"{what}: partition {p}: record {i} after record {last_index[p]}")
        next_offset[p] += 1
        last_index[p] = i
        seen.add(k)
    check(len(seen) == len(produced), f"{what}: {len(produced) - len(seen)} keys missing or duplicated")


def check_stored(data, topic, codec, n, what, every=False):
    """The segment files of topic hold n records in batches with consecutive offsets and intact
    CRCs; with codec "none" every batch is uncompressed; otherwise no batch has another codec,
    each partition keeps most of its records (every=True: all of them) in `codec` batches
    (librdkafka sends a batch uncompressed when compressing does not shrink it)."""
    want = [k for k, v in CODECS.items() if v == codec][0]
    total = 0
    summary = []
    for p in range(COMPRESSION_PARTITIONS):
        got = batches(os.path.join(data, f"{topic}-{p}"))
        check(got, f"{what}: {topic}-{p}: no batch on disk")
        offset = 0
        compressed = 0
        for b in got:
            where = f"{what}: {topic}-{p}/{b.segment}: batch at offset {b.base_offset}"
            check(b.crc_ok, f"{where}: its CRC-32C does not match its bytes")
            check(b.base_offset == offset, f"{where}: expected base offset {offset}")
            check(b.last_offset - b.base_offset + 1 == b.count, f"{where}: {b.count} records for offsets "
                  f"{b.base_offset}..{b.last_offset}")
            allowed = (want,) if every or want == 0 else (0, want)
            check(b.codec in allowed, f"{where}: stored with codec {CODECS.get(b.codec, b.codec)}, expected "
                  f"{' or '.join(CODECS[a] for a in allowed)}")
            offset = b.last_offset + 1
            if b.codec == want:
                compressed += b.count
        check(compressed * 2 > offset, f"{what}: {topic}-{p}: only {compressed} of {offset} records are in "
              f"{codec} batches")
        total += offset
        summary.append(f"{compressed}/{offset} records in {sum(b.codec == want for b in got)}/{len(got)} batches")
    check(total == n, f"{what}: {topic}: {total} records on disk, {n} produced")
    print(f"  {what}: stored {codec}: " + ", ".join(summary))


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

    def printed(i):
        """The whole lines member i has printed so far (a blank one too), split at tabs."""
        with open(os.path.join(work, f"member{i}.out"), newline="\n") as f:
            return [l[:-1].split("\t") for l in f if l.endswith("\n")]

    def consumed(i):
        """The records member i has printed so far: lines of partition, key and value. One CI
        run met a newline-ended line of fewer than 3 fields here, cause unknown (kcat only
        appends, and a line counts only once its newline is written); such lines do not
        count, and malformed() names them when the check fails."""
        return [r for r in printed(i) if len(r) == 3]

    def malformed():
        """Every member's printed lines that are not partition, key, value, with the tail of
        its stderr: what a failure message shows."""
        found = []
        for i in range(3):
            bad = [l for l in printed(i) if len(l) != 3]
            if bad:
                with open(os.path.join(work, f"member{i}.err")) as f:
                    err = f.read()[-2000:]
                found.append(f"member {i}: {len(bad)} lines such as {[chr(9).join(l) for l in bad[:3]]!r}; "
                             f"its stderr ends {err!r}")
        return found

    def wait_for(cond, what, seconds=30):
        deadline = time.monotonic() + seconds
        while not cond():
            if time.monotonic() > deadline:
                for p, _, _ in members:
                    p.kill()
                fail(f"kcat -G: {what} within {seconds} s; assignments {assignments()}; "
                     f"malformed lines: {malformed() or 'none'}")
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
    bad = malformed()
    check(not bad, f"kcat -G printed lines that are not partition, key, value: {bad}")
    after = {r[1] for i in (1, 2) for r in consumed(i) if r[2] == "after"}
    check(len(after) == 600, f"the survivors read {len(after)} distinct records of the 600 produced after the kill")
    print(f"  kcat -G: 3 members split 6 partitions; after a SIGKILL the 2 others took them over: {assignments()[1:]}")


if __name__ == "__main__":
    main()
