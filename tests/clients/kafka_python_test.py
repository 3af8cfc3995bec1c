"""kafka-python 2.0.2 (Debian python3-kafka, pure Python; it guesses the broker's version
from ApiVersions and then sends fixed versions) against `brook serve`.

  --scenario basic   admin create/list/describe configs/delete topics, a producer with
                     acks=all and keys, a consumer with manual assignment
  --scenario group   a consumer group: two members split the partitions, commits survive
                     a broker restart, the admin client lists and describes the group
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from brook_broker import Broker, args, check, fail, java_partition  # noqa: E402

try:
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
    from kafka.errors import KafkaError, TopicAlreadyExistsError
except ImportError:
    fail("kafka-python is not installed for /usr/bin/python3: run ./scripts/deps.sh (Debian package python3-kafka)")


def main():
    a = args()
    data = os.path.join(a.work, "data")
    if a.scenario in ("basic", "all"):
        with Broker(a.brook, data) as b:
            basic(b.address)
    if a.scenario in ("group", "all"):
        group(a.brook, os.path.join(a.work, "group-data"))
    print(f"kafka-python {a.scenario}: ok")


def produce(address, topic, n, start=0):
    p = KafkaProducer(bootstrap_servers=address, acks="all", linger_ms=5)
    futures = [(i, p.send(topic, key=b"k%d" % i, value=b"v%d" % i)) for i in range(start, start + n)]
    p.flush(30)
    out = {}
    for i, f in futures:
        md = f.get(30)
        out[i] = (md.partition, md.offset)
    p.close(10)
    return out


def basic(address):
    admin = KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=10000)
    r = admin.create_topics([NewTopic("py-orders", 3, 1, topic_configs={"retention.ms": "86400000"})])
    check(all(e == 0 for _, e, *_ in r.topic_errors), f"create_topics: {r}")
    try:
        admin.create_topics([NewTopic("py-orders", 3, 1)])
        fail("creating py-orders twice succeeded")
    except TopicAlreadyExistsError:
        pass
    check("py-orders" in admin.list_topics(), f"list_topics: {admin.list_topics()}")
    cfg = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "py-orders")])
    entries = {e[0]: e[1] for e in cfg[0].resources[0][4]}
    check(entries.get("retention.ms") == "86400000", f"describe_configs retention.ms: {entries.get('retention.ms')}")

    acked = produce(address, "py-orders", 1000)
    for i, (p, o) in acked.items():
        check(p == java_partition(b"k%d" % i, 3), f"k{i} went to partition {p}")
    c = KafkaConsumer(bootstrap_servers=address, auto_offset_reset="earliest", consumer_timeout_ms=5000,
                      enable_auto_commit=False)
    tps = [TopicPartition("py-orders", i) for i in range(3)]
    c.assign(tps)
    c.seek_to_beginning()
    got = {}
    for m in c:
        got[int(m.key[1:])] = (m.partition, m.offset, m.value)
        if len(got) == len(acked):
            break
    c.close()
    check(len(got) == len(acked), f"consumed {len(got)} of {len(acked)}")
    for i, (p, o) in acked.items():
        check(got[i] == (p, o, b"v%d" % i), f"k{i}: acked at {p}/{o}, read {got[i]}")

    r = admin.delete_topics(["py-orders"])
    check(all(e == 0 for _, e in r.topic_error_codes), f"delete_topics: {r}")
    check("py-orders" not in admin.list_topics(), "py-orders still listed after delete")
    admin.close()


def consume_group(address, group_id, want, members=1, timeout_s=30):
    """Runs `members` consumers of one group, each on its own thread (kafka-python rejoins a
    rebalance only inside poll(), so one thread cannot poll two members), until `want`
    records came; commits and closes them; returns the records and each one's assignment."""
    import threading
    import time
    got = {}
    lock = threading.Lock()
    assigned = [None] * members
    caught_up = [False] * members
    deadline = time.monotonic() + timeout_s

    def settled():
        """Every record read; with several members, the partitions split between them; and
        each member's position at the end of every partition it holds, so that its commit
        covers them. (A member may be given partitions another read before the rebalance:
        without the last condition it could commit its fresh position for them, their
        start, and the group would read them again after a restart.)"""
        if len(got) < want or any(a is None for a in assigned) or not all(caught_up):
            return False
        flat = sorted(p for a in assigned for p in a)
        return members == 1 or (len(flat) == len(set(flat)) and all(assigned))

    def member(i):
        c = KafkaConsumer("py-group", bootstrap_servers=address, group_id=group_id, auto_offset_reset="earliest",
                          enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=1000,
                          max_poll_interval_ms=20000)
        while time.monotonic() < deadline:
            with lock:
                if settled():
                    break
            polled = c.poll(timeout_ms=200)
            mine = list(c.assignment())
            try:
                ends = c.end_offsets(mine) if mine else {}
                at_end = all(c.position(tp) >= ends[tp] for tp in mine)
            except (AssertionError, KafkaError):  # a rebalance took a partition meanwhile
                at_end = False
            with lock:
                for tp, msgs in polled.items():
                    for m in msgs:
                        got[int(m.key[1:])] = (m.partition, m.offset)
                assigned[i] = sorted(tp.partition for tp in mine)
                caught_up[i] = at_end
        c.commit()
        c.close()

    threads = [threading.Thread(target=member, args=(i,)) for i in range(members)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout_s + 30)
    check(not any(t.is_alive() for t in threads), "a group member did not finish")
    return got, assigned


def group(brook, data):
    with Broker(brook, data, {"num.partitions": "4"}) as b:
        admin = KafkaAdminClient(bootstrap_servers=b.address)
        admin.create_topics([NewTopic("py-group", 4, 1)])
        acked = produce(b.address, "py-group", 400)
        got, assigned = consume_group(b.address, "pyg", 400, members=2)
        check(len(got) == 400, f"the group read {len(got)} of 400")
        flat = sorted(p for a in assigned for p in a)
        check(flat == [0, 1, 2, 3] and all(assigned), f"two members should split 4 partitions: {assigned}")
        groups = [g[0] for g in admin.list_consumer_groups()]
        check("pyg" in groups, f"list_consumer_groups: {groups}")
        admin.close()
    with Broker(brook, data) as b:  # committed offsets survive a restart
        produce(b.address, "py-group", 10, start=400)
        got, _ = consume_group(b.address, "pyg", 10, timeout_s=15)
        check(sorted(got) == list(range(400, 410)), f"after a restart the group read {sorted(got)[:20]}")
        admin = KafkaAdminClient(bootstrap_servers=b.address)
        d = admin.describe_consumer_groups(["pyg"])[0]
        check(d.group == "pyg" and d.state == "Empty", f"describe_consumer_groups: {d}")
        admin.close()


if __name__ == "__main__":
    main()
