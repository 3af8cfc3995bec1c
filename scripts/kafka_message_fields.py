#!/usr/bin/env python3
"""Prints the field tables of Kafka's wire messages, flattened, from apache/kafka's message
definitions (clients/src/main/resources/common/message/<Name>.json), in the form
tests/protocol/schema_vs_kafka_test.cpp prints brook's tables:

    == ProduceRequest valid=0-11 flexible=9+
    TopicData.PartitionData.Records present=0-11 nullable=0-11 tag=-1 ign=0 default=-

One line per field, depth first in declaration order; the versions of a field are those it
exists in within its parent's (and the message's valid versions), its nullable versions those
within its own; its default is Kafka's for integers, bools, strings and arrays ("-" for the
other types). tests/protocol/kafka_fields.txt is this script's output for the messages of
protocol/messages.hpp:

    scripts/kafka_message_fields.py /path/to/apache/kafka > tests/protocol/kafka_fields.txt

The path is a checkout or a bare repository (read at HEAD). Kafka's commit for brook's tables
is 1eb7644.
"""
import json
import os
import subprocess
import sys

# protocol/messages.hpp's APIs, in its order.
APIS = ["Produce", "Fetch", "ListOffsets", "Metadata", "OffsetCommit", "OffsetFetch", "FindCoordinator",
        "JoinGroup", "Heartbeat", "LeaveGroup", "SyncGroup", "DescribeGroups", "ListGroups", "ApiVersions",
        "CreateTopics", "DeleteTopics", "InitProducerId", "DescribeConfigs", "DeleteGroups"]
OPEN = 32767
MESSAGES = "clients/src/main/resources/common/message"


def read_definition(repo, name):
    path = os.path.join(repo, MESSAGES, name + ".json")
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    else:
        text = subprocess.run(["git", "-C", repo, "show", f"HEAD:{MESSAGES}/{name}.json"], check=True,
                              capture_output=True, text=True).stdout
    return json.loads("\n".join(l for l in text.split("\n") if not l.strip().startswith("//")))


def parse(v):
    if v is None or v == "none":
        return None
    if v.endswith("+"):
        return (int(v[:-1]), OPEN)
    if "-" in v:
        lo, hi = v.split("-")
        return (int(lo), int(hi))
    return (int(v), int(v))


def meet(a, b):
    if a is None or b is None:
        return None
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return (lo, hi) if lo <= hi else None


def text(v):
    if v is None:
        return "none"
    return f"{v[0]}+" if v[1] == OPEN else f"{v[0]}-{v[1]}"


INTS = {"int8", "int16", "int32", "int64", "uint16", "uint32"}


def default(f):
    """The field's default as Kafka's generator sets it (FieldSpec.fieldDefault), for scalars,
    strings and arrays; "-" for bytes, records, uuids and structs."""
    t, d = f["type"], f.get("default")
    if t.startswith("[]"):
        return "null" if d == "null" else "[]"
    if t in INTS:
        if d is None or d == "":
            return "0"
        return str(int(str(d), 0))
    if t == "bool":
        return "true" if str(d).lower() == "true" else "false"
    if t == "string":
        return "null" if d == "null" else '"' + (d or "") + '"'
    return "-"


def fields(out, spec, common, prefix, parent):
    for f in spec:
        present = meet(parse(f["versions"]), parent)
        nullable = meet(parse(f.get("nullableVersions")), present)
        ign = 1 if f.get("ignorable", False) else 0
        out.append(f"{prefix}{f['name']} present={text(present)} nullable={text(nullable)} "
                   f"tag={f.get('tag', -1)} ign={ign} default={default(f)}")
        sub = f.get("fields")
        if sub is None:
            sub = common.get(f["type"].lstrip("[]"))
        if sub:
            fields(out, sub, common, prefix + f["name"] + ".", present)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = []
    for api in APIS:
        for kind in ("Request", "Response"):
            m = read_definition(sys.argv[1], api + kind)
            valid = parse(m["validVersions"])
            out.append(f"== {m['name']} valid={text(valid)} flexible={text(parse(m.get('flexibleVersions')))}")
            common = {s["name"]: s["fields"] for s in m.get("commonStructs", [])}
            fields(out, m["fields"], common, "", valid)
    print("\n".join(out))


if __name__ == "__main__":
    main()
