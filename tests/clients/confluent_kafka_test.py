"""confluent-kafka-python 1.7.0 (Debian python3-confluent-kafka, on librdkafka 2.0.2)
against `brook serve`.

  --scenario basic   AdminClient create/list/delete topics, a Producer with delivery
                     reports, a Consumer with manual assignment
  --scenario group   a Consumer group of two that commits, and AdminClient.list_groups
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from brook_broker import Broker, args, check, fail, java_partition  # noqa: E402

try:
    from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic
except ImportError:
    fail("confluent-kafka is not installed for /usr/bin/python3: run ./scripts/deps.sh "
         "(Debian package python3-confluent-kafka)")


def main():
    a = args()
    if a.scenario in ("basic", "all"):
        with Broker(a.brook, os.path.join(a.work, "data")) as b:
            basic(b.address)
    if a.scenario in ("group", "all"):
        with Broker(a.brook, os.path.join(a.work, "group-data")) as b:
            group(b.address)
    print(f"confluent-kafka {a.scenario}: ok")


def produce(address, topic, n, start=0):
    reports = {}

    def on_delivery(err, msg):
        reports[int(msg.key()[1:])] = (err, msg.partition(), msg.offset())

    p = Producer({"bootstrap.servers": address, "acks": "all", "partitioner": "murmur2_random"})
    for i in range(start, start + n):
        p.produce(topic, key=b"k%d" % i, value=b"v%d" % i, on_delivery=on_delivery)
        p.poll(0)
    left = p.flush(30)
    check(left == 0, f"{left} messages not delivered within 30 s")
    check(len(reports) == n, f"{len(reports)} delivery reports for {n} messages")
    for i, (err, part, off) in reports.items():
        check(err is None, f"k{i}: delivery error {err}")
        check(part == java_partition(b"k%d" % i, 3) or topic != "ck-orders", f"k{i} went to partition {part}")
    return reports


def basic(address):
    admin = AdminClient({"bootstrap.servers": address})
    for t, f in admin.create_topics([NewTopic("ck-orders", num_partitions=3, replication_factor=1)]).items():
        f.result(10)
    for t, f in admin.create_topics([NewTopic("ck-orders", num_partitions=3, replication_factor=1)]).items():
        try:
            f.result(10)
            fail("creating ck-orders twice succeeded")
        except Exception as e:  # KafkaException(TOPIC_ALREADY_EXISTS)
            check(e.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS, f"creating it twice: {e}")
    md = admin.list_topics(timeout=10)
    check("ck-orders" in md.topics and len(md.topics["ck-orders"].partitions) == 3, f"list_topics: {md.topics}")

    reports = produce(address, "ck-orders", 2000)
    c = Consumer({"bootstrap.servers": address, "group.id": "unused", "enable.auto.commit": False})
    c.assign([TopicPartition("ck-orders", p, 0) for p in range(3)])
    got = {}
    deadline = time.monotonic() + 20
    while len(got) < len(reports) and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None or m.error():
            continue
        got[int(m.key()[1:])] = (None, m.partition(), m.offset())
        check(m.value() == b"v" + m.key()[1:], f"{m.key()} came back with {m.value()}")
    c.close()
    check(got == reports, f"read {len(got)} records; those differing: "
                          f"{[k for k in reports if got.get(k) != reports[k]][:5]}")

    for t, f in admin.delete_topics(["ck-orders"]).items():
        f.result(10)
    check("ck-orders" not in admin.list_topics(timeout=10).topics, "ck-orders listed after delete")


def group(address):
    admin = AdminClient({"bootstrap.servers": address})
    for t, f in admin.create_topics([NewTopic("ck-group", num_partitions=4, replication_factor=1)]).items():
        f.result(10)
    reports = produce(address, "ck-group", 400)
    conf = {"bootstrap.servers": address, "group.id": "ckg", "auto.offset.reset": "earliest",
            "enable.auto.commit": False, "session.timeout.ms": 10000}
    cs = [Consumer(conf) for _ in range(2)]
    for c in cs:
        c.subscribe(["ck-group"])
    got = {}
    deadline = time.monotonic() + 30
    while len(got) < len(reports) and time.monotonic() < deadline:
        for c in cs:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got[int(m.key()[1:])] = (None, m.partition(), m.offset())
    check(len(got) == len(reports), f"the group read {len(got)} of {len(reports)}")
    assigned = [sorted(tp.partition for tp in c.assignment()) for c in cs]
    check(sorted(p for a in assigned for p in a) == [0, 1, 2, 3], f"two members should split 4 partitions: {assigned}")
    for c in cs:
        c.commit(asynchronous=False)
    committed = cs[0].committed([TopicPartition("ck-group", p) for p in range(4)], timeout=10)
    ends = {p: 1 + max(o for (_, pp, o) in reports.values() if pp == p) for p in range(4)}
    for tp in committed:
        check(tp.offset == ends[tp.partition], f"committed {tp.partition}: {tp.offset}, end {ends[tp.partition]}")
    for c in cs:
        c.close()
    groups = [g.id for g in admin.list_groups(timeout=10)]
    check("ckg" in groups, f"list_groups: {groups}")


if __name__ == "__main__":
    main()
