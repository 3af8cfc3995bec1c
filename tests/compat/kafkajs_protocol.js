#!/usr/bin/env node
// Cross-implementation check of brook's Kafka wire-protocol codec against kafkajs 2.2.4's
// request encoders and response decoders (src/protocol/requests/<api>/v<N>/{request,response}.js).
//
//   node kafkajs_protocol.js --tool <path to protocol_tool> [--seed N] [--count N]
//
// For every API below and every version kafkajs has, COUNT seeded random cases each way:
//   (a) requests: random arguments -> kafkajs's request encoder -> bytes -> brook's
//       codec::decode at that version -> JSON with Kafka's field names, which must equal the
//       arguments mapped field by field (the tables below, kafkajs name -> Kafka name);
//   (b) responses: brook fills a response with random values and encodes it -> kafkajs's
//       response decode -> which must equal brook's values mapped field by field (Kafka name ->
//       kafkajs name); every field brook wrote must be one the mapping reads. kafkajs's `parse`
//       must give the same, where it cannot throw: always for DeleteGroups (its parse never
//       throws), and for the other APIs (whose parse throws on a non-zero error code) on the
//       responses whose error codes are all 0.
// Records: Produce requests carry what kafkajs built from the messages (a v0/v1 message set for
// v0-v2, a RecordBatch v2 for v3+). brook's Records bytes must equal the bytes kafkajs's own
// MessageSet / RecordBatch give for the same messages, and for v3+ brook's record_batch_view
// must parse them back to those messages (protocol_tool parse-records). Fetch v4+ responses
// carry RecordBatch v2 bytes from brook's record_batch_builder (1-2 batches, empty or null);
// kafkajs's records (every record and its batch context) must equal brook's own parse of the
// same bytes. Fetch v0-v3: see deviation 6.
//
// Where kafkajs deviates from Kafka's message definitions the check follows kafkajs for exactly
// that field and nothing else:
//   1. Throttle time: from some version on kafkajs moves ThrottleTimeMs to
//      `clientSideThrottleTime` and sets `throttleTime: 0` (KIP-219 handling); checked as such.
//   2. DeleteGroups v1 response: kafkajs spreads the v0 result, which names the field
//      `throttleTimeMs`, then sets `clientSideThrottleTime: decoded.throttleTime`, which is
//      undefined: the value is checked in `throttleTimeMs`, `clientSideThrottleTime` undefined.
//   3. CreateTopics and DeleteTopics responses: kafkajs sorts the topics by name
//      (String.prototype.localeCompare); the expected list is sorted the same way.
//   4. Empty arrays sent as null: kafkajs's writeNullableArray writes an empty array as null,
//      so Metadata v1+ Topics, OffsetFetch v3+ Topics and DescribeConfigs ConfigurationKeys are
//      null (never empty) when kafkajs is given [].
//   5. Nullable arrays read as empty: kafkajs's readArray returns [] for a null array (Fetch
//      v4+ AbortedTransactions), and its records readers return [] for null records.
//   6. Fetch v0-v3 responses: kafkajs reads only message format v0/v1 there (what a broker
//      down-converts to for those versions) and cannot step over null records (its message-set
//      reader moves back on a -1 length): protocol_tool puts a legacy message set (magic 0 for
//      v0-v1, 1 for v2-v3; possibly empty, never null) in Records there, and kafkajs's messages
//      must equal protocol_tool's own reading of those bytes.
//   7. DescribeConfigs v0 response: kafkajs derives `configSource` (DEFAULT_CONFIG when
//      IsDefault, else from the resource type); v1+: it derives `isDefault` from ConfigSource.
//   8. Defaults: some of kafkajs's argument defaults differ from Kafka's field defaults (Fetch
//      isolationLevel READ_COMMITTED (1) vs 0; CreateTopics/DeleteTopics timeout 5000 vs 60000 /
//      none; OffsetCommit v1 timestamp Date.now() vs -1; ListOffsets timestamp -1 vs none). Every
//      argument is given explicitly here, so no default of either side is relied on.
//   9. Produce v3+: kafkajs orders timestamps with Array.prototype.sort (as strings), so the
//      messages here use 13-digit timestamps, where that order is the numeric one.
//  10. DeleteGroups results: kafkajs's decode adds `error` (a KafkaJSProtocolError) to each
//      result whose ErrorCode is not 0; the expected value has the same error.
// Random responses stay within what kafkajs reads (see protocol_tool.cpp): no ErrorCode 35
// (UNSUPPORTED_VERSION, on which kafkajs's decode throws), real record batches.
'use strict'

const { spawnSync } = require('child_process')

const NAME = 'compat_kafkajs_protocol'
const HINT = 'run `npm ci --prefix tests/compat` (scripts/test.sh does this)'

function fail(msg) {
  console.error(`${NAME}: FAILED: ${msg}`)
  process.exit(1)
}

let kjs
try {
  const pkg = require('kafkajs/package.json')
  if (pkg.version !== '2.2.4') fail(`kafkajs ${pkg.version} is installed, expected 2.2.4: ${HINT}`)
  kjs = {
    MessageSet: require('kafkajs/src/protocol/messageSet'),
    Types: require('kafkajs/src/protocol/message/compression').Types,
    Record: require('kafkajs/src/protocol/recordBatch/record/v0'),
    RecordBatch: require('kafkajs/src/protocol/recordBatch/v0').RecordBatch,
    Long: require('kafkajs/src/utils/long'),
    TimestampTypes: require('kafkajs/src/protocol/timestampTypes'),
    ConfigSource: require('kafkajs/src/protocol/configSource'),
    ConfigResourceTypes: require('kafkajs/src/protocol/configResourceTypes'),
    createErrorFromCode: require('kafkajs/src/protocol/error').createErrorFromCode,
  }
} catch (e) {
  fail(`kafkajs is not installed next to this script (${e.message.split('\n')[0]}): ${HINT}`)
}
const fs = require('fs')
const path = require('path')
const REQUESTS = path.dirname(require.resolve('kafkajs/src/protocol/requests'))

// ---------------------------------------------------------------- arguments
const args = { seed: '1', count: '40' }
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]
if (!args.tool) fail('usage: kafkajs_protocol.js --tool <protocol_tool> [--seed N] [--count N]')
const SEED = BigInt(args.seed)
const COUNT = Number(args.count)
console.log(`kafkajs_protocol: seed ${SEED} count ${COUNT} (rerun with --seed ${SEED} to reproduce)`)

// ---------------------------------------------------------------- seeded PRNG (splitmix64)
let state = SEED
const M64 = (1n << 64n) - 1n
function next64() {
  state = (state + 0x9e3779b97f4a7c15n) & M64
  let z = state
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64
  return z ^ (z >> 31n)
}
const below = n => Number(next64() % BigInt(n)) // [0, n)
const coin = () => below(2) === 0
const i8 = () => Number(BigInt.asIntN(8, next64()))
const i16 = () => Number(BigInt.asIntN(16, next64()))
const i32 = () => (below(4) === 0 ? below(3) - 1 : Number(BigInt.asIntN(32, next64())))
const i64 = () => (below(4) === 0 ? String(below(3) - 1) : BigInt.asIntN(64, next64()).toString())
const LEGAL = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-'
const WIDE = ['é', '€', '🙂']
const str = () => {
  let s = ''
  for (let n = below(10); n > 0; n--) s += below(16) === 0 ? WIDE[below(3)] : LEGAL[below(LEGAL.length)]
  return s
}
const nstr = () => (below(4) === 0 ? null : str())
const bytes = () => {
  const b = Buffer.alloc(below(12))
  for (let i = 0; i < b.length; i++) b[i] = below(256)
  return b
}
const arr = (f, max = 3) => Array.from({ length: below(max + 1) }, f)
const hex = b => (b == null ? null : b.toString('hex'))

// ---------------------------------------------------------------- mapping helpers
// ThrottleTimeMs as kafkajs returns it: absent before `since`, `throttleTime` until
// `clientSide`, then `throttleTime: 0` and `clientSideThrottleTime` (deviation 1).
function throttle(v, body, since, clientSide) {
  if (v < since) return {}
  if (v < clientSide) return { throttleTime: body.ThrottleTimeMs }
  return { throttleTime: 0, clientSideThrottleTime: body.ThrottleTimeMs }
}
const buf = h => (h == null ? null : Buffer.from(h, 'hex'))
const byName = key => (a, b) => a[key].localeCompare(b[key]) // deviation 3

// ---------------------------------------------------------------- the APIs
// Each API: request(v) -> { args, want } (kafkajs's arguments, and what brook must decode,
// with Kafka's field names, for exactly the fields of version v); response(v, body, recs) ->
// what kafkajs's decode must return for brook's response `body` (Kafka's names).
// recs(hex) gives brook's parse of a Records field (for Fetch); counted(n) tallies records.

const APIS = []
const api = (name, dir, key, def) => APIS.push({ name, dir, key, ...def })

// Heartbeat: groupId GroupId | groupGenerationId GenerationId | memberId MemberId |
// groupInstanceId GroupInstanceId (v3). Response: errorCode ErrorCode, throttle (v1; client-side v2+).
api('Heartbeat', 'heartbeat', 12, {
  request(v) {
    const a = { groupId: str(), groupGenerationId: i32(), memberId: str() }
    const w = { GroupId: a.groupId, GenerationId: a.groupGenerationId, MemberId: a.memberId }
    if (v >= 3) w.GroupInstanceId = a.groupInstanceId = nstr()
    return { args: a, want: w }
  },
  response: (v, b) => ({ ...throttle(v, b, 1, 2), errorCode: b.ErrorCode }),
})

// LeaveGroup: groupId GroupId | memberId MemberId (v0-2) | members Members (v3):
// memberId MemberId, groupInstanceId GroupInstanceId. Response: errorCode ErrorCode |
// members Members (v3): memberId MemberId, groupInstanceId GroupInstanceId, errorCode ErrorCode.
api('LeaveGroup', 'leaveGroup', 13, {
  request(v) {
    if (v < 3) {
      const a = { groupId: str(), memberId: str() }
      return { args: a, want: { GroupId: a.groupId, MemberId: a.memberId } }
    }
    const a = { groupId: str(), members: arr(() => ({ memberId: str(), groupInstanceId: nstr() })) }
    const w = {
      GroupId: a.groupId,
      Members: a.members.map(m => ({ MemberId: m.memberId, GroupInstanceId: m.groupInstanceId })),
    }
    return { args: a, want: w }
  },
  response(v, b) {
    const o = { ...throttle(v, b, 1, 2), errorCode: b.ErrorCode }
    if (v >= 3)
      o.members = b.Members.map(m => ({
        memberId: m.MemberId,
        groupInstanceId: m.GroupInstanceId,
        errorCode: m.ErrorCode,
      }))
    return o
  },
})

// SyncGroup: groupId GroupId | generationId GenerationId | memberId MemberId |
// groupInstanceId GroupInstanceId (v3) | groupAssignment Assignments: memberId MemberId,
// memberAssignment Assignment. Response: errorCode ErrorCode | memberAssignment Assignment.
api('SyncGroup', 'syncGroup', 14, {
  request(v) {
    const a = {
      groupId: str(),
      generationId: i32(),
      memberId: str(),
      groupAssignment: arr(() => ({ memberId: str(), memberAssignment: bytes() })),
    }
    const w = { GroupId: a.groupId, GenerationId: a.generationId, MemberId: a.memberId }
    if (v >= 3) w.GroupInstanceId = a.groupInstanceId = nstr()
    w.Assignments = a.groupAssignment.map(g => ({ MemberId: g.memberId, Assignment: hex(g.memberAssignment) }))
    return { args: a, want: w }
  },
  response: (v, b) => ({ ...throttle(v, b, 1, 2), errorCode: b.ErrorCode, memberAssignment: buf(b.Assignment) }),
})

// FindCoordinator: groupId Key (v0) | coordinatorKey Key, coordinatorType KeyType (v1+).
// Response: errorCode ErrorCode | errorMessage ErrorMessage (v1+) | coordinator.nodeId NodeId,
// coordinator.host Host, coordinator.port Port.
api('FindCoordinator', 'findCoordinator', 10, {
  request(v) {
    if (v === 0) {
      const a = { groupId: str() }
      return { args: a, want: { Key: a.groupId } }
    }
    const a = { coordinatorKey: str(), coordinatorType: i8() }
    return { args: a, want: { Key: a.coordinatorKey, KeyType: a.coordinatorType } }
  },
  response(v, b) {
    const o = { ...throttle(v, b, 1, 2), errorCode: b.ErrorCode }
    if (v >= 1) o.errorMessage = b.ErrorMessage
    o.coordinator = { nodeId: b.NodeId, host: b.Host, port: b.Port }
    return o
  },
})

// ListGroups: no request fields. Response: errorCode ErrorCode | groups Groups: groupId
// GroupId, protocolType ProtocolType.
api('ListGroups', 'listGroups', 16, {
  request: () => ({ args: undefined, want: {} }),
  response: (v, b) => ({
    ...throttle(v, b, 1, 2),
    errorCode: b.ErrorCode,
    groups: b.Groups.map(g => ({ groupId: g.GroupId, protocolType: g.ProtocolType })),
  }),
})

// ApiVersions: no request fields (v0-v2). Response: errorCode ErrorCode | apiVersions ApiKeys:
// apiKey ApiKey, minVersion MinVersion, maxVersion MaxVersion.
api('ApiVersions', 'apiVersions', 18, {
  request: () => ({ args: undefined, want: {} }),
  response: (v, b) => ({
    errorCode: b.ErrorCode,
    apiVersions: b.ApiKeys.map(k => ({ apiKey: k.ApiKey, minVersion: k.MinVersion, maxVersion: k.MaxVersion })),
    ...throttle(v, b, 1, 2),
  }),
})

// DeleteGroups: (the argument array) GroupsNames. Response: throttleTimeMs ThrottleTimeMs |
// results Results: groupId GroupId, errorCode ErrorCode (+ error, deviation 10); v1 deviation 2.
api('DeleteGroups', 'deleteGroups', 42, {
  request() {
    const a = arr(str)
    return { args: a, want: { GroupsNames: a } }
  },
  response(v, b) {
    const o = {
      throttleTimeMs: b.ThrottleTimeMs,
      results: b.Results.map(r => {
        const x = { groupId: r.GroupId, errorCode: r.ErrorCode }
        if (r.ErrorCode !== 0) x.error = kjs.createErrorFromCode(r.ErrorCode)
        return x
      }),
    }
    if (v >= 1) Object.assign(o, { throttleTime: 0, clientSideThrottleTime: undefined })
    return o
  },
})

// DeleteTopics: topics TopicNames | timeout TimeoutMs. Response: topicErrors Responses (sorted,
// deviation 3): topic Name, errorCode ErrorCode.
api('DeleteTopics', 'deleteTopics', 20, {
  request() {
    const a = { topics: arr(str), timeout: i32() }
    return { args: a, want: { TopicNames: a.topics, TimeoutMs: a.timeout } }
  },
  response: (v, b) => ({
    ...throttle(v, b, 1, 1),
    topicErrors: b.Responses.map(t => ({ topic: t.Name, errorCode: t.ErrorCode })).sort(byName('topic')),
  }),
})

// InitProducerId: transactionalId TransactionalId | transactionTimeout TransactionTimeoutMs.
// Response: errorCode ErrorCode | producerId ProducerId | producerEpoch ProducerEpoch.
api('InitProducerId', 'initProducerId', 22, {
  request() {
    const a = { transactionalId: nstr(), transactionTimeout: i32() }
    return { args: a, want: { TransactionalId: a.transactionalId, TransactionTimeoutMs: a.transactionTimeout } }
  },
  response: (v, b) => ({
    ...throttle(v, b, 0, 1),
    errorCode: b.ErrorCode,
    producerId: b.ProducerId,
    producerEpoch: b.ProducerEpoch,
  }),
})

// JoinGroup: groupId GroupId | sessionTimeout SessionTimeoutMs | rebalanceTimeout
// RebalanceTimeoutMs (v1+) | memberId MemberId | groupInstanceId GroupInstanceId (v5) |
// protocolType ProtocolType | groupProtocols Protocols: name Name, metadata Metadata.
// Response: errorCode ErrorCode | generationId GenerationId | groupProtocol ProtocolName |
// leaderId Leader | memberId MemberId | members Members: memberId MemberId, groupInstanceId
// GroupInstanceId (v5), memberMetadata Metadata.
api('JoinGroup', 'joinGroup', 11, {
  request(v) {
    const a = { groupId: str(), sessionTimeout: i32(), memberId: str(), protocolType: str() }
    a.groupProtocols = arr(() => ({ name: str(), metadata: bytes() }))
    const w = { GroupId: a.groupId, SessionTimeoutMs: a.sessionTimeout }
    if (v >= 1) w.RebalanceTimeoutMs = a.rebalanceTimeout = i32()
    w.MemberId = a.memberId
    if (v >= 5) w.GroupInstanceId = a.groupInstanceId = nstr()
    w.ProtocolType = a.protocolType
    w.Protocols = a.groupProtocols.map(p => ({ Name: p.name, Metadata: hex(p.metadata) }))
    return { args: a, want: w }
  },
  response: (v, b) => ({
    ...throttle(v, b, 2, 3),
    errorCode: b.ErrorCode,
    generationId: b.GenerationId,
    groupProtocol: b.ProtocolName,
    leaderId: b.Leader,
    memberId: b.MemberId,
    members: b.Members.map(m => ({
      memberId: m.MemberId,
      ...(v >= 5 ? { groupInstanceId: m.GroupInstanceId } : {}),
      memberMetadata: buf(m.Metadata),
    })),
  }),
})

// DescribeGroups: groupIds Groups. Response: groups Groups: errorCode ErrorCode, groupId
// GroupId, state GroupState, protocolType ProtocolType, protocol ProtocolData, members Members:
// memberId MemberId, clientId ClientId, clientHost ClientHost, memberMetadata MemberMetadata,
// memberAssignment MemberAssignment.
api('DescribeGroups', 'describeGroups', 15, {
  request() {
    const a = { groupIds: arr(str) }
    return { args: a, want: { Groups: a.groupIds } }
  },
  response: (v, b) => ({
    ...throttle(v, b, 1, 2),
    groups: b.Groups.map(g => ({
      errorCode: g.ErrorCode,
      groupId: g.GroupId,
      state: g.GroupState,
      protocolType: g.ProtocolType,
      protocol: g.ProtocolData,
      members: g.Members.map(m => ({
        memberId: m.MemberId,
        clientId: m.ClientId,
        clientHost: m.ClientHost,
        memberMetadata: buf(m.MemberMetadata),
        memberAssignment: buf(m.MemberAssignment),
      })),
    })),
  }),
})

// OffsetFetch (kafkajs has v1-v4): groupId GroupId | topics Topics (v3+: [] is null,
// deviation 4): topic Name, partitions[].partition PartitionIndexes. Response: responses
// Topics: topic Name, partitions Partitions: partition PartitionIndex, offset CommittedOffset,
// metadata Metadata, errorCode ErrorCode | errorCode ErrorCode (v2+).
api('OffsetFetch', 'offsetFetch', 9, {
  request(v) {
    const a = { groupId: str(), topics: arr(() => ({ topic: str(), partitions: arr(() => ({ partition: i32() })) })) }
    let topics = a.topics.map(t => ({ Name: t.topic, PartitionIndexes: t.partitions.map(p => p.partition) }))
    if (v >= 3 && topics.length === 0) topics = null
    return { args: a, want: { GroupId: a.groupId, Topics: topics } }
  },
  response(v, b) {
    const o = {
      ...throttle(v, b, 3, 4),
      responses: b.Topics.map(t => ({
        topic: t.Name,
        partitions: t.Partitions.map(p => ({
          partition: p.PartitionIndex,
          offset: p.CommittedOffset,
          metadata: p.Metadata,
          errorCode: p.ErrorCode,
        })),
      })),
    }
    if (v >= 2) o.errorCode = b.ErrorCode
    return o
  },
})

// OffsetCommit: groupId GroupId | groupGenerationId GenerationIdOrMemberEpoch (v1+) | memberId
// MemberId (v1+) | retentionTime RetentionTimeMs (v2-v4) | topics Topics: topic Name,
// partitions Partitions: partition PartitionIndex, offset CommittedOffset, timestamp
// CommitTimestamp (v1), metadata CommittedMetadata. Response: responses Topics: topic Name,
// partitions Partitions: partition PartitionIndex, errorCode ErrorCode.
api('OffsetCommit', 'offsetCommit', 8, {
  request(v) {
    const a = { groupId: str() }
    const w = { GroupId: a.groupId }
    if (v >= 1) {
      w.GenerationIdOrMemberEpoch = a.groupGenerationId = i32()
      w.MemberId = a.memberId = str()
    }
    if (v >= 2 && v <= 4) w.RetentionTimeMs = a.retentionTime = i64()
    a.topics = arr(() => ({
      topic: str(),
      partitions: arr(() => {
        const p = { partition: i32(), offset: i64(), metadata: nstr() }
        if (v === 1) p.timestamp = i64()
        return p
      }),
    }))
    w.Topics = a.topics.map(t => ({
      Name: t.topic,
      Partitions: t.partitions.map(p => ({
        PartitionIndex: p.partition,
        CommittedOffset: p.offset,
        ...(v === 1 ? { CommitTimestamp: p.timestamp } : {}),
        CommittedMetadata: p.metadata,
      })),
    }))
    return { args: a, want: w }
  },
  response: (v, b) => ({
    ...throttle(v, b, 3, 4),
    responses: b.Topics.map(t => ({
      topic: t.Name,
      partitions: t.Partitions.map(p => ({ partition: p.PartitionIndex, errorCode: p.ErrorCode })),
    })),
  }),
})

// ListOffsets: replicaId ReplicaId | isolationLevel IsolationLevel (v2+) | topics Topics: topic
// Name, partitions Partitions: partition PartitionIndex, timestamp Timestamp, maxNumOffsets
// MaxNumOffsets (v0). Response: responses Topics: topic Name, partitions Partitions: partition
// PartitionIndex, errorCode ErrorCode, offsets OldStyleOffsets (v0) | timestamp Timestamp,
// offset Offset (v1+).
api('ListOffsets', 'listOffsets', 2, {
  request(v) {
    const a = { replicaId: i32() }
    const w = { ReplicaId: a.replicaId }
    if (v >= 2) w.IsolationLevel = a.isolationLevel = i8()
    a.topics = arr(() => ({
      topic: str(),
      partitions: arr(() => {
        const p = { partition: i32(), timestamp: i64() }
        if (v === 0) p.maxNumOffsets = i32()
        return p
      }),
    }))
    w.Topics = a.topics.map(t => ({
      Name: t.topic,
      Partitions: t.partitions.map(p => ({
        PartitionIndex: p.partition,
        Timestamp: p.timestamp,
        ...(v === 0 ? { MaxNumOffsets: p.maxNumOffsets } : {}),
      })),
    }))
    return { args: a, want: w }
  },
  response: (v, b) => ({
    ...throttle(v, b, 2, 3),
    responses: b.Topics.map(t => ({
      topic: t.Name,
      partitions: t.Partitions.map(p =>
        v === 0
          ? { partition: p.PartitionIndex, errorCode: p.ErrorCode, offsets: p.OldStyleOffsets }
          : { partition: p.PartitionIndex, errorCode: p.ErrorCode, timestamp: p.Timestamp, offset: p.Offset }
      ),
    })),
  }),
})

// Metadata: topics Topics[].Name (v1+: [] is null, deviation 4) | allowAutoTopicCreation
// AllowAutoTopicCreation (v4+). Response: brokers Brokers: nodeId NodeId, host Host, port Port,
// rack Rack (v1+) | clusterId ClusterId (v2+) | controllerId ControllerId (v1+) | topicMetadata
// Topics: topicErrorCode ErrorCode, topic Name, isInternal IsInternal (v1+), partitionMetadata
// Partitions: partitionErrorCode ErrorCode, partitionId PartitionIndex, leader LeaderId,
// replicas ReplicaNodes, isr IsrNodes, offlineReplicas OfflineReplicas (v5+).
api('Metadata', 'metadata', 3, {
  request(v) {
    const a = { topics: arr(str) }
    let topics = a.topics.map(t => ({ Name: t }))
    if (v >= 1 && topics.length === 0) topics = null
    const w = { Topics: topics }
    if (v >= 4) w.AllowAutoTopicCreation = a.allowAutoTopicCreation = coin()
    return { args: a, want: w }
  },
  response(v, b) {
    const o = { ...throttle(v, b, 3, 6) }
    o.brokers = b.Brokers.map(k => ({
      nodeId: k.NodeId,
      host: k.Host,
      port: k.Port,
      ...(v >= 1 ? { rack: k.Rack } : {}),
    }))
    if (v >= 2) o.clusterId = b.ClusterId
    if (v >= 1) o.controllerId = b.ControllerId
    o.topicMetadata = b.Topics.map(t => ({
      topicErrorCode: t.ErrorCode,
      topic: t.Name,
      ...(v >= 1 ? { isInternal: t.IsInternal } : {}),
      partitionMetadata: t.Partitions.map(p => ({
        partitionErrorCode: p.ErrorCode,
        partitionId: p.PartitionIndex,
        leader: p.LeaderId,
        replicas: p.ReplicaNodes,
        isr: p.IsrNodes,
        ...(v >= 5 ? { offlineReplicas: p.OfflineReplicas } : {}),
      })),
    }))
    return o
  },
})

// CreateTopics: topics Topics: topic Name, numPartitions NumPartitions, replicationFactor
// ReplicationFactor, replicaAssignment Assignments (partition PartitionIndex, replicas
// BrokerIds), configEntries Configs (name Name, value Value) | timeout timeoutMs | validateOnly
// validateOnly (v1+). Response: topicErrors Topics (sorted, deviation 3): topic Name, errorCode
// ErrorCode, errorMessage ErrorMessage (v1+).
api('CreateTopics', 'createTopics', 19, {
  request(v) {
    const a = {
      topics: arr(() => ({
        topic: str(),
        numPartitions: i32(),
        replicationFactor: i16(),
        replicaAssignment: arr(() => ({ partition: i32(), replicas: arr(i32) })),
        configEntries: arr(() => ({ name: str(), value: nstr() })),
      })),
      timeout: i32(),
    }
    const w = {
      Topics: a.topics.map(t => ({
        Name: t.topic,
        NumPartitions: t.numPartitions,
        ReplicationFactor: t.replicationFactor,
        Assignments: t.replicaAssignment.map(r => ({ PartitionIndex: r.partition, BrokerIds: r.replicas })),
        Configs: t.configEntries.map(c => ({ Name: c.name, Value: c.value })),
      })),
      timeoutMs: a.timeout,
    }
    if (v >= 1) w.validateOnly = a.validateOnly = coin()
    return { args: a, want: w }
  },
  response: (v, b) => ({
    ...throttle(v, b, 2, 3),
    topicErrors: b.Topics.map(t => ({
      topic: t.Name,
      errorCode: t.ErrorCode,
      ...(v >= 1 ? { errorMessage: t.ErrorMessage } : {}),
    })).sort(byName('topic')),
  }),
})

// DescribeConfigs: resources Resources: type ResourceType, name ResourceName, configNames
// ConfigurationKeys ([] is null, deviation 4) | includeSynonyms IncludeSynonyms (v1+).
// Response: resources Results: errorCode ErrorCode, errorMessage ErrorMessage, resourceType
// ResourceType, resourceName ResourceName, configEntries Configs: configName Name, configValue
// Value, readOnly ReadOnly, isDefault IsDefault (v0; derived v1+, deviation 7), configSource
// ConfigSource (v1+; derived v0), isSensitive IsSensitive, configSynonyms Synonyms (v1+):
// configName Name, configValue Value, configSource Source.
api('DescribeConfigs', 'describeConfigs', 32, {
  request(v) {
    const a = { resources: arr(() => ({ type: coin() ? [0, 2, 4, 8][below(4)] : i8(), name: str(), configNames: arr(str) })) }
    const w = {
      Resources: a.resources.map(r => ({
        ResourceType: r.type,
        ResourceName: r.name,
        ConfigurationKeys: r.configNames.length === 0 ? null : r.configNames,
      })),
    }
    if (v >= 1) w.IncludeSynonyms = a.includeSynonyms = coin()
    return { args: a, want: w }
  },
  response(v, b) {
    const { ConfigSource: CS, ConfigResourceTypes: RT } = kjs
    const v0Source = (isDefault, type) =>
      isDefault
        ? CS.DEFAULT_CONFIG
        : type === RT.BROKER
        ? CS.STATIC_BROKER_CONFIG
        : type === RT.TOPIC
        ? CS.TOPIC_CONFIG
        : CS.UNKNOWN
    return {
      ...throttle(v, b, 0, 2),
      resources: b.Results.map(r => ({
        errorCode: r.ErrorCode,
        errorMessage: r.ErrorMessage,
        resourceType: r.ResourceType,
        resourceName: r.ResourceName,
        configEntries: r.Configs.map(c =>
          v === 0
            ? {
                configName: c.Name,
                configValue: c.Value,
                readOnly: c.ReadOnly,
                isDefault: c.IsDefault,
                configSource: v0Source(c.IsDefault, r.ResourceType),
                isSensitive: c.IsSensitive,
              }
            : {
                configName: c.Name,
                configValue: c.Value,
                readOnly: c.ReadOnly,
                isDefault: c.ConfigSource === CS.DEFAULT_CONFIG,
                configSource: c.ConfigSource,
                isSensitive: c.IsSensitive,
                configSynonyms: c.Synonyms.map(s => ({ configName: s.Name, configValue: s.Value, configSource: s.Source })),
              }
        ),
      })),
    }
  },
})

// Produce: transactionalId TransactionalId (v3+) | acks Acks | timeout TimeoutMs | topicData
// TopicData: topic Name, partitions PartitionData: partition Index, messages Records (the bytes
// kafkajs builds; see the header). producerId/producerEpoch go into the record batch (v3+).
// Response: topics Responses: topicName Name, partitions PartitionResponses: partition Index,
// errorCode ErrorCode, offset BaseOffset (v0-v2; baseOffset v3+), timestamp LogAppendTimeMs
// (v2; logAppendTime v3+), logStartOffset LogStartOffset (v5+).
const ts13 = () => 1600000000000 + below(1000000000)
const randomMessages = () =>
  Array.from({ length: 1 + below(3) }, () => {
    const m = { key: below(5) === 0 ? null : bytes(), value: below(5) === 0 ? null : bytes(), timestamp: ts13() }
    const h = {}
    for (let n = below(3); n > 0; n--) h['h' + str()] = bytes()
    m.headers = h
    return m
  })
async function kafkajsRecords(v, a, messages) {
  // The bytes kafkajs's Produce encoder writes for one partition, built with its own modules
  // and the arguments its encoder passes (produce/v0/request.js, v2, v3).
  // v0 passes no compression (MessageSet then numbers the offsets 0, 1, ...), v2 passes None
  // (offsets -1).
  if (v < 2) return kjs.MessageSet({ messageVersion: 0, entries: messages }).buffer
  if (v === 2) return kjs.MessageSet({ messageVersion: 1, compression: kjs.Types.None, entries: messages }).buffer
  const timestamps = messages.map(m => m.timestamp).sort()
  const firstTimestamp = timestamps[0]
  const records = messages.map((m, i) =>
    kjs.Record({ ...m, offsetDelta: i, timestampDelta: m.timestamp - firstTimestamp })
  )
  const batch = await kjs.RecordBatch({
    records,
    firstTimestamp,
    maxTimestamp: timestamps[timestamps.length - 1],
    producerId: a.producerId,
    producerEpoch: a.producerEpoch,
    transactional: !!a.transactionalId,
    lastOffsetDelta: records.length - 1,
  })
  return batch.buffer
}
api('Produce', 'produce', 0, {
  async request(v) {
    const a = { acks: i16(), timeout: i32() }
    if (v >= 3) {
      a.transactionalId = nstr()
      a.producerId = kjs.Long.fromValue(below(4) === 0 ? -1 : below(2 ** 30))
      a.producerEpoch = below(100)
    }
    a.topicData = arr(() => ({ topic: str(), partitions: arr(() => ({ partition: i32(), messages: randomMessages() })) }))
    const w = {}
    if (v >= 3) w.TransactionalId = a.transactionalId
    w.Acks = a.acks
    w.TimeoutMs = a.timeout
    w.TopicData = []
    for (const t of a.topicData) {
      const parts = []
      for (const p of t.partitions) parts.push({ Index: p.partition, Records: hex(await kafkajsRecords(v, a, p.messages)) })
      w.TopicData.push({ Name: t.topic, PartitionData: parts })
    }
    return { args: a, want: w }
  },
  response: (v, b) => ({
    topics: b.Responses.map(t => ({
      topicName: t.Name,
      partitions: t.PartitionResponses.map(p => {
        const o = { partition: p.Index, errorCode: p.ErrorCode }
        if (v < 3) {
          o.offset = p.BaseOffset
          if (v === 2) o.timestamp = p.LogAppendTimeMs
        } else {
          o.baseOffset = p.BaseOffset
          o.logAppendTime = p.LogAppendTimeMs
          if (v >= 5) o.logStartOffset = p.LogStartOffset
        }
        return o
      }),
    })),
    ...throttle(v, b, 1, 6),
  }),
})

// Fetch: replicaId ReplicaId | maxWaitTime MaxWaitMs | minBytes MinBytes | maxBytes MaxBytes
// (v3+) | isolationLevel IsolationLevel (v4+) | sessionId SessionId, sessionEpoch SessionEpoch
// (v7+) | topics Topics: topic Topic, partitions Partitions: partition Partition,
// currentLeaderEpoch CurrentLeaderEpoch (v9+), fetchOffset FetchOffset, logStartOffset
// LogStartOffset (v5+), maxBytes PartitionMaxBytes | forgottenTopics ForgottenTopicsData (v7+):
// topic Topic, partitions Partitions | rackId RackId (v11).
// Response: errorCode ErrorCode, sessionId SessionId (v7+) | responses Responses: topicName
// Topic, partitions Partitions: partition PartitionIndex, errorCode ErrorCode, highWatermark
// HighWatermark, lastStableOffset LastStableOffset (v4+), lastStartOffset LogStartOffset (v5+),
// abortedTransactions AbortedTransactions (v4+; null read as [], deviation 5): producerId
// ProducerId, firstOffset FirstOffset, preferredReadReplica PreferredReadReplica (v11),
// messages Records (brook's parse of the record batches, v4+; the legacy message set as
// protocol_tool reads it, v0-v3; deviations 5 and 6).
function legacyMessages(parsed) {
  if (!parsed.legacy) throw new Error('Fetch v0-v3 records are not a legacy message set')
  return parsed.legacy.map(m => ({
    offset: m.offset,
    size: m.size,
    crc: m.crc,
    magicByte: m.magic,
    attributes: m.attributes,
    ...(m.magic === 1 ? { timestamp: m.timestamp } : {}),
    key: buf(m.key),
    value: buf(m.value),
  }))
}
function kafkajsMessages(parsed) {
  if (!parsed.batches) throw new Error('Fetch v4+ records are not record batches')
  const { TimestampTypes } = kjs
  const out = []
  for (const bt of parsed.batches) {
    const attributes = bt.attributes
    const ctx = {
      firstOffset: bt.baseOffset,
      firstTimestamp: bt.baseTimestamp,
      partitionLeaderEpoch: bt.partitionLeaderEpoch,
      inTransaction: (attributes & 0x10) !== 0,
      isControlBatch: (attributes & 0x20) !== 0,
      lastOffsetDelta: bt.lastOffsetDelta,
      producerId: bt.producerId,
      producerEpoch: bt.producerEpoch,
      firstSequence: bt.baseSequence,
      maxTimestamp: bt.maxTimestamp,
      timestampType: (attributes & 0x08) !== 0 ? TimestampTypes.LOG_APPEND_TIME : TimestampTypes.CREATE_TIME,
      magicByte: bt.magic,
    }
    for (const r of bt.records) {
      const headers = {}
      for (const [k, hv] of r.headers) {
        const val = buf(hv)
        headers[k] = headers[k] === undefined ? val : [].concat(headers[k], [val])
      }
      out.push({
        magicByte: bt.magic,
        attributes: 0, // record attributes: record_batch_builder writes 0
        timestamp: r.timestamp,
        offset: r.offset,
        key: buf(r.key),
        value: buf(r.value),
        headers,
        isControlRecord: ctx.isControlBatch,
        batchContext: ctx,
      })
    }
  }
  return out
}
api('Fetch', 'fetch', 1, {
  request(v) {
    const a = { replicaId: i32(), maxWaitTime: i32(), minBytes: i32() }
    const w = { ReplicaId: a.replicaId, MaxWaitMs: a.maxWaitTime, MinBytes: a.minBytes }
    if (v >= 3) w.MaxBytes = a.maxBytes = i32()
    if (v >= 4) w.IsolationLevel = a.isolationLevel = i8()
    if (v >= 7) {
      w.SessionId = a.sessionId = i32()
      w.SessionEpoch = a.sessionEpoch = i32()
    }
    a.topics = arr(() => ({
      topic: str(),
      partitions: arr(() => {
        const p = { partition: i32(), fetchOffset: i64(), maxBytes: i32() }
        if (v >= 5) p.logStartOffset = i64()
        if (v >= 9) p.currentLeaderEpoch = i32()
        return p
      }),
    }))
    w.Topics = a.topics.map(t => ({
      Topic: t.topic,
      Partitions: t.partitions.map(p => ({
        Partition: p.partition,
        ...(v >= 9 ? { CurrentLeaderEpoch: p.currentLeaderEpoch } : {}),
        FetchOffset: p.fetchOffset,
        ...(v >= 5 ? { LogStartOffset: p.logStartOffset } : {}),
        PartitionMaxBytes: p.maxBytes,
      })),
    }))
    if (v >= 7) {
      a.forgottenTopics = arr(() => ({ topic: str(), partitions: arr(i32) }))
      w.ForgottenTopicsData = a.forgottenTopics.map(t => ({ Topic: t.topic, Partitions: t.partitions }))
    }
    if (v >= 11) w.RackId = a.rackId = str()
    return { args: a, want: w }
  },
  response(v, b, recs, counted) {
    const o = { ...throttle(v, b, 1, 8) }
    if (v >= 7) {
      o.errorCode = b.ErrorCode
      o.sessionId = b.SessionId
    }
    o.responses = b.Responses.map(t => ({
      topicName: t.Topic,
      partitions: t.Partitions.map(p => {
        const x = { partition: p.PartitionIndex, errorCode: p.ErrorCode, highWatermark: p.HighWatermark }
        if (v >= 4) x.lastStableOffset = p.LastStableOffset
        if (v >= 5) x.lastStartOffset = p.LogStartOffset
        if (v >= 4)
          x.abortedTransactions = (p.AbortedTransactions || []).map(t2 => ({
            producerId: t2.ProducerId,
            firstOffset: t2.FirstOffset,
          }))
        if (v >= 11) x.preferredReadReplica = p.PreferredReadReplica
        if (p.Records == null || p.Records === '') x.messages = []
        else if (v < 4) x.messages = legacyMessages(recs(p.Records))
        else x.messages = kafkajsMessages(recs(p.Records))
        counted(x.messages.length)
        return x
      }),
    }))
    return o
  },
  records: b => b.Responses.flatMap(t => t.Partitions.map(p => p.Records)).filter(r => r),
})

// ---------------------------------------------------------------- comparison
// Canonical form: Buffers as hex, BigInts as strings, errors by name and message, undefined
// kept (as "<undefined>"), object keys sorted.
function canon(x) {
  if (x === undefined) return '<undefined>'
  if (x === null || typeof x !== 'object') return typeof x === 'bigint' ? x.toString() : x
  if (Buffer.isBuffer(x)) return { buffer: x.toString('hex') }
  if (x instanceof Error) return { error: `${x.name}: ${x.message} (${x.type})` }
  if (Array.isArray(x)) return x.map(canon)
  const o = {}
  for (const k of Object.keys(x).sort()) o[k] = canon(x[k])
  return o
}
function firstDiff(a, b, at = '') {
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') {
    return a === b ? null : `${at || '.'}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`
  }
  if (Array.isArray(a) !== Array.isArray(b)) return `${at}: array vs object`
  if (Array.isArray(a) && a.length !== b.length) return `${at}: ${a.length} vs ${b.length} elements`
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const k of keys) {
    if (!(k in a)) return `${at}.${k}: missing on the left`
    if (!(k in b)) return `${at}.${k}: missing on the right`
    const d = firstDiff(a[k], b[k], `${at}.${k}`)
    if (d) return d
  }
  return null
}

// Every field of brook's response must be used by the mapping (so that it is compared with
// what kafkajs read): the mapping gets a view of the body that records the fields it reads.
function tracked(x, seen) {
  if (x === null || typeof x !== 'object') return x
  if (!seen.has(x)) seen.set(x, new Set())
  const read = seen.get(x)
  return new Proxy(x, {
    get(t, k) {
      if (typeof k === 'string') read.add(k)
      return tracked(t[k], seen)
    },
  })
}
function firstUnread(x, seen, at = '') {
  if (x === null || typeof x !== 'object') return null
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      const u = firstUnread(x[i], seen, `${at}.${i}`)
      if (u) return u
    }
    return null
  }
  const read = seen.get(x) || new Set()
  for (const k of Object.keys(x)) {
    if (!read.has(k)) return `${at}.${k}`
    const u = firstUnread(x[k], seen, `${at}.${k}`)
    if (u) return u
  }
  return null
}

// Whether a response body has an ErrorCode other than 0 anywhere.
function hasErrorCode(x) {
  if (x === null || typeof x !== 'object') return false
  if (Array.isArray(x)) return x.some(hasErrorCode)
  return Object.keys(x).some(k => (k === 'ErrorCode' && x[k] !== 0) || hasErrorCode(x[k]))
}

// ---------------------------------------------------------------- tool
function runTool(lines) {
  const r = spawnSync(args.tool, [], { input: lines.join('\n') + '\n', maxBuffer: 1 << 30, encoding: 'utf8' })
  if (r.error) fail(`cannot run ${args.tool}: ${r.error.message}`)
  if (r.status !== 0) fail(`${args.tool} exited with ${r.status}: ${r.stderr}`)
  const out = r.stdout.split('\n').filter(l => l.length > 0)
  if (out.length !== lines.length) fail(`${args.tool}: ${out.length} output lines for ${lines.length} inputs`)
  return out.map(l => JSON.parse(l))
}

const versionsOf = dir =>
  fs
    .readdirSync(path.join(REQUESTS, dir))
    .filter(d => /^v\d+$/.test(d))
    .map(d => Number(d.slice(1)))
    .sort((x, y) => x - y)

async function main() {
  const started = Date.now()
  const reqCases = []
  const respCases = []
  const lines = []
  for (const A of APIS) {
    for (const v of versionsOf(A.dir)) {
      const encodeRequest = require(path.join(REQUESTS, A.dir, `v${v}`, 'request'))
      for (let i = 0; i < COUNT; i++) {
        const { args: a, want } = await A.request(v)
        const req = encodeRequest(a)
        if (req.apiKey !== A.key || req.apiVersion !== v) fail(`${A.name} v${v}: kafkajs says key ${req.apiKey} v${req.apiVersion}`)
        const body = (await req.encode()).buffer
        reqCases.push({ A, v, i, a, want, line: lines.length, bytes: body })
        lines.push(`decode-request ${A.key} ${v} ${body.length === 0 ? '-' : body.toString('hex')}`)
      }
      for (let i = 0; i < COUNT; i++) {
        respCases.push({ A, v, i, line: lines.length })
        lines.push(`random-response ${A.key} ${v} ${(next64() >> 1n).toString()}`)
      }
    }
  }
  const out = runTool(lines)

  // Records: every Produce request's and Fetch response's record bytes, parsed by brook.
  const recLines = []
  const recIndex = new Map()
  const wantRecords = h => {
    if (!recIndex.has(h)) {
      recIndex.set(h, recLines.length)
      recLines.push(`parse-records ${h}`)
    }
  }
  for (const c of reqCases)
    if (c.A.name === 'Produce' && c.v >= 3 && out[c.line].ok)
      for (const t of out[c.line].body.TopicData) for (const p of t.PartitionData) if (p.Records) wantRecords(p.Records)
  for (const c of respCases) if (c.A.records && out[c.line].ok) c.A.records(out[c.line].body).forEach(wantRecords)
  const recOut = recLines.length ? runTool(recLines) : []
  const recs = h => {
    const r = recOut[recIndex.get(h)]
    if (!r.ok) throw new Error(`brook cannot parse records ${h}: ${r.code} ${r.message}`)
    return r
  }

  let failures = 0
  let recordsChecked = 0
  const tally = new Map()
  const count = (A, v, what) => {
    const k = `${A.name} ${what}`
    if (!tally.has(k)) tally.set(k, new Map())
    const m = tally.get(k)
    m.set(v, (m.get(v) || 0) + 1)
  }
  function mismatch(what, c, detail) {
    failures++
    if (failures <= 10) console.error(`MISMATCH ${c.A.name} v${c.v} ${what} (case ${c.i}, seed ${SEED}):\n  ${detail}`)
  }

  // (a) requests
  for (const c of reqCases) {
    const got = out[c.line]
    if (!got.ok) {
      mismatch('request', c, `brook cannot decode kafkajs's bytes ${c.bytes.toString('hex')}: ${got.code} ${got.message}`)
      continue
    }
    const d = firstDiff(canon(got.body), canon(c.want))
    if (d) {
      mismatch('request', c, `brook ${JSON.stringify(got.body)}\n  want  ${JSON.stringify(c.want)}\n  first difference ${d}`)
      continue
    }
    if (c.A.name === 'Produce' && c.v >= 3) {
      // brook's parse of the batches kafkajs built gives back the messages and batch fields.
      let bad = null
      c.a.topicData.forEach((t, ti) =>
        t.partitions.forEach((p, pi) => {
          if (bad) return
          const parsed = recs(got.body.TopicData[ti].PartitionData[pi].Records)
          const bt = parsed.batches[0]
          const want = {
            batches: 1,
            producerId: c.a.producerId.toString(),
            producerEpoch: c.a.producerEpoch,
            transactional: !!c.a.transactionalId,
            records: p.messages.map((m, k) => ({
              offset: String(k),
              timestamp: String(m.timestamp),
              key: hex(m.key),
              value: hex(m.value),
              headers: Object.keys(m.headers).map(h => [h, hex(m.headers[h])]),
            })),
          }
          const have = {
            batches: parsed.batches.length,
            producerId: bt.producerId,
            producerEpoch: bt.producerEpoch,
            transactional: (bt.attributes & 0x10) !== 0,
            records: bt.records,
          }
          recordsChecked += want.records.length
          const diff = firstDiff(canon(have), canon(want))
          if (diff) bad = `record batch of ${t.topic}/${p.partition}: ${diff}`
        })
      )
      if (bad) {
        mismatch('request records', c, bad)
        continue
      }
    }
    count(c.A, c.v, 'requests')
  }

  // (b) responses
  for (const c of respCases) {
    const got = out[c.line]
    if (!got.ok) {
      mismatch('response', c, `brook cannot encode its random response: ${got.code} ${got.message}`)
      continue
    }
    let decoded
    const { decode, parse } = require(path.join(REQUESTS, c.A.dir, `v${c.v}`, 'response'))
    try {
      decoded = await decode(Buffer.from(got.hex, 'hex'))
    } catch (e) {
      mismatch('response', c, `kafkajs cannot decode brook's ${got.hex}: ${e.stack}`)
      continue
    }
    let want
    const seen = new Map()
    try {
      want = c.A.response(c.v, tracked(got.body, seen), recs, n => (recordsChecked += n))
    } catch (e) {
      mismatch('response', c, e.message)
      continue
    }
    const unread = firstUnread(got.body, seen)
    if (unread) {
      mismatch('response', c, `brook's field ${unread} is not compared (the mapping does not read it)`)
      continue
    }
    const d = firstDiff(canon(decoded), canon(want))
    if (d) {
      mismatch('response', c, `brook body ${JSON.stringify(got.body)}\n  first difference (kafkajs vs want) ${d}`)
      continue
    }
    count(c.A, c.v, 'responses')
    // kafkajs's parse as well when it cannot throw: DeleteGroups's never does, every other one
    // here throws on a non-zero error code, so it runs on responses that carry none.
    if (c.A.name === 'DeleteGroups' || !hasErrorCode(got.body)) {
      let parsed
      try {
        parsed = await parse(decoded)
      } catch (e) {
        mismatch('response parse', c, `kafkajs's parse throws on brook's ${got.hex}: ${e.stack}`)
        continue
      }
      const d2 = firstDiff(canon(parsed), canon(want))
      if (d2) {
        mismatch('response parse', c, `brook body ${JSON.stringify(got.body)}\n  first difference (kafkajs vs want) ${d2}`)
        continue
      }
      count(c.A, c.v, 'responses also parsed')
    }
  }

  for (const [k, m] of tally) console.log(`${k}: ${[...m].map(([v, n]) => `v${v} ${n}`).join(', ')}`)
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  console.log(
    `(a) ${reqCases.length} kafkajs requests decoded by brook, (b) ${respCases.length} brook responses ` +
      `decoded by kafkajs; ${recordsChecked} records compared; ${seconds} s`
  )
  if (failures > 0) fail(`${failures} mismatches (first ones above); seed ${SEED}`)
  console.log(`${NAME}: OK`)
}

main().catch(e => fail(e.stack))
