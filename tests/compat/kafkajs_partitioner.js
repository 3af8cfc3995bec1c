#!/usr/bin/env node
// Cross-implementation check of the keyed partitioner between brook and kafkajs 2.2.4,
// whose DefaultPartitioner (formerly JavaCompatiblePartitioner) reproduces the Java
// client's toPositive(murmur2(key)) % numPartitions with 64-bit Long arithmetic; brook
// computes it in uint32_t.
//
//   node kafkajs_partitioner.js --tool <path to partitioner_tool> [--seed N] [--count N]
//
// For Kafka's own UtilsTest.testMurmur2 keys plus COUNT seeded random keys (random bytes of
// length 0..64, the empty key, ASCII, multi-byte UTF-8 strings with 2-, 3- and 4-byte
// characters, numeric strings), each with partition counts covering 1..100:
//   (a) brook's murmur2 equals kafkajs's default/murmur2.js (binary keys passed as Buffers,
//       text keys as JS strings, which kafkajs encodes as UTF-8 the way Java's
//       String.getBytes(UTF_8) does);
//   (b) brook's partition_for_key and default_partitioner equal kafkajs's DefaultPartitioner.
//   (c) Kafka's published murmur2 values are reproduced by kafkajs itself.
// Null keys are not compared: kafkajs round-robins them from a random start, Kafka 2.4+
// and brook stick to a random partition; neither is reproducible across implementations.
'use strict'

const { spawnSync } = require('child_process')

const NAME = 'compat_kafkajs_partitioner'
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
    murmur2: require('kafkajs/src/producer/partitioners/default/murmur2'),
    legacyMurmur2: require('kafkajs/src/producer/partitioners/legacy/murmur2'),
    Partitioners: require('kafkajs').Partitioners,
  }
} catch (e) {
  fail(`kafkajs is not installed next to this script (${e.message.split('\n')[0]}): ${HINT}`)
}

// ---------------------------------------------------------------- arguments
const args = { seed: '1', count: '400' }
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]
if (!args.tool) fail('usage: kafkajs_partitioner.js --tool <partitioner_tool> [--seed N] [--count N]')
const SEED = BigInt(args.seed)
const COUNT = Number(args.count)
console.log(`kafkajs_partitioner: seed ${SEED} count ${COUNT} (rerun with --seed ${SEED} to reproduce)`)

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
const pick = xs => xs[below(xs.length)]

// ---------------------------------------------------------------- keys
// A key is { kafkajs: what is passed to kafkajs (Buffer or string), bytes: its UTF-8/raw bytes }.
const bufKey = b => ({ kafkajs: b, bytes: b, show: `bytes ${b.toString('hex') || '(empty)'}` })
const strKey = s => ({ kafkajs: s, bytes: Buffer.from(s, 'utf8'), show: `string ${JSON.stringify(s)}` })

const ASCII = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/ '
// 2-byte (é, ü, я), 3-byte (鍵, €, 한), 4-byte (🔑, 😀, 𝄞) UTF-8 sequences.
const WIDE = ['é', 'ü', 'я', 'ñ', '鍵', '€', '한', 'ア', '🔑', '😀', '𝄞', '🌵']

function randomKey() {
  switch (below(6)) {
    case 0:
    case 1: {
      const b = Buffer.alloc(below(65)) // 0..64 random bytes, 0x80..0xff included
      for (let i = 0; i < b.length; i++) b[i] = below(256)
      return bufKey(b)
    }
    case 2: {
      let s = ''
      const n = below(40)
      for (let i = 0; i < n; i++) s += ASCII[below(ASCII.length)]
      return strKey(s)
    }
    case 3:
    case 4: {
      let s = ''
      const n = 1 + below(20)
      for (let i = 0; i < n; i++) s += below(3) === 0 ? ASCII[below(ASCII.length)] : pick(WIDE)
      return strKey(s)
    }
    default:
      return strKey(String(below(2 ** 31))) // numeric ids, a common key shape
  }
}

// Kafka's UtilsTest.testMurmur2 (apache/kafka clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java).
const KAFKA_VECTORS = [
  ['21', -973932308],
  ['foobar', -790332482],
  ['a-little-bit-long-string', -985981536],
  ['a-little-bit-longer-string', -1486304829],
  ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
  ['abc', 479470107],
]

const keys = KAFKA_VECTORS.map(([s]) => strKey(s))
keys.push(bufKey(Buffer.alloc(0)), strKey(''))
for (let len = 1; len <= 8; len++) keys.push(bufKey(Buffer.alloc(len, 0xff))) // every tail length, high bytes
while (keys.length < COUNT) keys.push(randomKey())

// Cases: every key with a random partition count, plus each of 1..100 on successive keys.
const cases = []
keys.forEach((k, i) => {
  cases.push({ key: k, n: 1 + below(100) })
  if (i < 100) cases.push({ key: k, n: i + 1 })
})

// ---------------------------------------------------------------- kafkajs side
const partitioner = kjs.Partitioners.DefaultPartitioner()
const metadataFor = n => Array.from({ length: n }, (_, i) => ({ partitionId: i, leader: 0 }))
const kafkajsPartition = (key, n) =>
  partitioner({ topic: 'compat', partitionMetadata: metadataFor(n), message: { key, value: 'v' } })

// ---------------------------------------------------------------- brook side
function runTool(lines) {
  const r = spawnSync(args.tool, [], { input: lines.join('\n') + '\n', maxBuffer: 1 << 28, encoding: 'utf8' })
  if (r.error) fail(`cannot run ${args.tool}: ${r.error.message}`)
  if (r.status !== 0) fail(`${args.tool} exited with ${r.status}: ${r.stderr}`)
  const out = r.stdout.split('\n').filter(l => l.length > 0)
  if (out.length !== lines.length) fail(`${args.tool}: ${out.length} output lines for ${lines.length} inputs`)
  return out.map(l => l.split(' ').map(Number))
}

// ---------------------------------------------------------------- checks
let failures = 0
function mismatch(what, c, got, want) {
  failures++
  if (failures <= 10) console.error(`MISMATCH ${what}: key ${c.key.show}, ${c.n} partitions: brook ${got}, kafkajs ${want} (seed ${SEED})`)
}

// (c) Kafka's published values, computed by kafkajs (guards the reference itself).
for (const [s, want] of KAFKA_VECTORS) {
  const got = kjs.murmur2(s)
  if (got !== want) fail(`kafkajs murmur2(${JSON.stringify(s)}) = ${got}, Kafka's UtilsTest says ${want}`)
}

const brook = runTool(cases.map(c => `${c.key.bytes.length === 0 ? '.' : c.key.bytes.toString('hex')} ${c.n}`))
let hashOk = 0
let partOk = 0
let legacyAgrees = 0
const lengths = new Set()
const counts = new Set()
cases.forEach((c, i) => {
  const [hash, forKey, viaPartitioner] = brook[i]
  const wantHash = kjs.murmur2(c.key.kafkajs)
  const wantPart = kafkajsPartition(c.key.kafkajs, c.n)
  lengths.add(c.key.bytes.length)
  counts.add(c.n)
  let ok = true
  if (hash !== wantHash) { mismatch('(a) murmur2', c, hash, wantHash); ok = false } else hashOk++
  if (forKey !== wantPart) { mismatch('(b) partition_for_key', c, forKey, wantPart); ok = false }
  if (viaPartitioner !== wantPart) { mismatch('(b) default_partitioner', c, viaPartitioner, wantPart); ok = false }
  if (forKey === wantPart && viaPartitioner === wantPart) partOk++
  if (ok && kjs.legacyMurmur2(c.key.kafkajs) === wantHash) legacyAgrees++
})
// Kafka's vectors through brook as well (the keys are first in `cases`).
KAFKA_VECTORS.forEach(([s, want]) => {
  const i = cases.findIndex(c => c.key.kafkajs === s)
  if (brook[i][0] !== want) fail(`brook murmur2(${JSON.stringify(s)}) = ${brook[i][0]}, Kafka's UtilsTest says ${want}`)
})
for (let n = 1; n <= 100; n++) if (!counts.has(n)) fail(`partition count ${n} was not exercised`)

console.log(`keys: ${keys.length} (${lengths.size} distinct byte lengths, max ${Math.max(...lengths)}); ` +
  `cases: ${cases.length}, partition counts 1..100 all covered`)
console.log(`(a) murmur2 identical: ${hashOk}/${cases.length}`)
console.log(`(b) partition identical (partition_for_key and default_partitioner): ${partOk}/${cases.length}`)
console.log(`(c) Kafka's ${KAFKA_VECTORS.length} UtilsTest.testMurmur2 values reproduced by kafkajs and brook`)
console.log(`note: kafkajs's LegacyPartitioner murmur2 (not Java compatible) agreed on only ${legacyAgrees}/${cases.length}, ` +
  'so the comparison does tell Java-compatible hashes from others')
if (failures > 0) fail(`${failures} mismatches (first ones above); seed ${SEED}`)
console.log(`${NAME}: OK`)
