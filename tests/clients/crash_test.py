"""A crash under a real client: confluent-kafka (librdkafka) produces with acks=all while
`brook serve` is killed with SIGKILL at a seeded moment; after a restart on the same
directory every acknowledged record is read back at the offset its delivery report gave,
with its value. Several rounds on one directory, each killing at a different point.

    crash_test.py --brook B --work W [--scenario ROUNDS]   (default 3 rounds)
"""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from brook_broker import Broker, args, check, fail  # noqa: E402

try:
    from confluent_kafka import Consumer, Producer, TopicPartition
except ImportError:
    fail("confluent-kafka is not installed for /usr/bin/python3: run ./scripts/deps.sh")

PARTITIONS = 3


def main():
    a = args()
    rounds = 3 if a.scenario == "all" else int(a.scenario)
    rng = random.Random(20261203)
    data = os.path.join(a.work, "data")
    acked = {}  # value -> (partition, offset)
    serial = 0
    for r in range(rounds):
        b = Broker(a.brook, data, {"num.partitions": str(PARTITIONS)})
        b.start()
        kill_after = rng.randint(200, 3000)
        serial, n = produce_until_killed(b, serial, kill_after, acked)
        print(f"round {r}: killed after {n} acknowledged records in this round")
        check(n >= kill_after, f"round {r}: only {n} records were acknowledged before the kill")
    with Broker(a.brook, data) as b:
        verify(b.address, acked)
    print(f"crash: {rounds} SIGKILLs, {len(acked)} acknowledged records all read back: ok")


def produce_until_killed(b, serial, kill_after, acked):
    """Produces until `kill_after` records of this round are acknowledged, SIGKILLs the
    broker with more in flight, then gives up on the rest."""
    this_round = [0]

    def on_delivery(err, msg):
        if err is None:
            acked[msg.value().decode()] = (msg.partition(), msg.offset())
            this_round[0] += 1

    p = Producer({"bootstrap.servers": b.address, "acks": "all", "linger.ms": 2, "message.timeout.ms": 5000,
                  "retries": 0, "enable.idempotence": False})
    deadline = time.monotonic() + 60
    killed = False
    while time.monotonic() < deadline:
        value = f"r{serial}"
        serial += 1
        try:
            p.produce("crash", key=value.encode(), value=value.encode(), on_delivery=on_delivery)
        except BufferError:
            p.poll(0.05)
        p.poll(0)
        if this_round[0] >= kill_after and not killed:
            b.kill()  # requests in flight now: their records may or may not be stored
            killed = True
            break
    if not killed:
        b.kill()
        fail(f"only {this_round[0]} of {kill_after} records acknowledged within 60 s; log: {b.log_tail()}")
    p.flush(8)  # the rest fail (message.timeout.ms): not acknowledged, so not promised
    return serial, this_round[0]


def verify(address, acked):
    c = Consumer({"bootstrap.servers": address, "group.id": "crash-check", "enable.auto.commit": False})
    c.assign([TopicPartition("crash", p, 0) for p in range(PARTITIONS)])
    at = {}
    deadline = time.monotonic() + 60
    want = set(acked.values())
    missing = len(want)  # acknowledged positions not read yet (a count: a subset test per record is quadratic)
    while missing > 0 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None or m.error():
            continue
        pos = (m.partition(), m.offset())
        if pos in want and pos not in at:
            missing -= 1
        at[pos] = m.value().decode()
    c.close()
    lost = [(v, po) for v, po in acked.items() if at.get(po) != v]
    check(not lost, f"{len(lost)} acknowledged records not at their offsets after restart, e.g. "
                    f"{[(v, po, at.get(po)) for v, po in lost[:5]]}")


if __name__ == "__main__":
    main()
