#!/usr/bin/env node
// Cross-implementation check of the consumer protocol (JoinGroup subscription, SyncGroup
// assignment) between brook and kafkajs 2.2.4 (consumer/assignerProtocol.js: MemberMetadata,
// MemberAssignment).
//
//   node kafkajs_consumer_protocol.js --tool <path to consumer_protocol_tool> [--seed N] [--count N]
//
// kafkajs writes the version-0 layout whatever version it is given (topics, userData for a
// subscription; assignedPartitions, userData for an assignment) and reads only those fields.
// For COUNT seeded random cases (topic names from Kafka's legal characters [a-zA-Z0-9._-],
// user data null, empty or random):
//   (a) kafkajs -> brook: brook decodes kafkajs's subscriptions (v0) and assignments (v0..3)
//       to exactly the fields kafkajs was given;
//   (b) brook -> kafkajs, byte identity: brook's v0 subscription and its encode_assignment
//       (v3, grouped by topic in order of first appearance, userData null) equal kafkajs's
//       bytes for the same input;
//   (c) brook -> kafkajs: kafkajs decodes brook's encode_subscription (v3, Java's order: topics
//       sorted) to version 3, the sorted topics and null userData (kafkajs ignores the v1+ fields).
'use strict'

const { spawnSync } = require('child_process')

const NAME = 'compat_kafkajs_consumer_protocol'
const HINT = 'run `npm ci --prefix tests/compat` (scripts/test.sh does this)'

function fail(msg) {
  console.error(`${NAME}: FAILED: ${msg}`)
  process.exit(1)
}

let kjs
try {
  const pkg = require('kafkajs/package.json')
  if (pkg.version !== '2.2.4') fail(`kafkajs ${pkg.version} is installed, expected 2.2.4: ${HINT}`)
  kjs = require('kafkajs/src/consumer/assignerProtocol')
} catch (e) {
  fail(`kafkajs is not installed next to this script (${e.message.split('\n')[0]}): ${HINT}`)
}

// ---------------------------------------------------------------- arguments
const args = { seed: '1', count: '300' }
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]
if (!args.tool) fail('usage: kafkajs_consumer_protocol.js --tool <consumer_protocol_tool> [--seed N] [--count N]')
const SEED = BigInt(args.seed)
const COUNT = Number(args.count)
console.log(`kafkajs_consumer_protocol: seed ${SEED} count ${COUNT} (rerun with --seed ${SEED} to reproduce)`)

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

// ---------------------------------------------------------------- random inputs
const LEGAL = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-'
// A letter first: JavaScript orders integer-like object keys numerically, which would change
// kafkajs's assignment order; Kafka topic names may start with a letter anyway.
const randomTopic = () => {
  let s = 'tT'[below(2)]
  for (let n = below(12); n > 0; n--) s += LEGAL[below(LEGAL.length)]
  return s
}
const randomUserData = () => {
  switch (below(3)) {
    case 0: return null
    case 1: return Buffer.alloc(0)
    default: {
      const b = Buffer.alloc(1 + below(20))
      for (let i = 0; i < b.length; i++) b[i] = below(256)
      return b
    }
  }
}
const randomTopics = () => Array.from({ length: below(6) }, randomTopic)
// An assignment object { topic: [partitions] } with distinct topics, partitions in random order.
// Never an empty list: Java and brook build the groups from a flat partition list, where a
// topic without partitions cannot appear.
const randomAssignment = () => {
  const a = {}
  for (let n = below(5); n > 0; n--) a[randomTopic()] = Array.from({ length: 1 + below(5) }, () => below(1000))
  return a
}

// ---------------------------------------------------------------- tool wire format
const hexOf = s => Buffer.from(s, 'utf8').toString('hex')
const showTopics = ts => (ts.length === 0 ? '-' : ts.map(hexOf).join(','))
const flatten = a => Object.keys(a).flatMap(t => a[t].map(p => [t, p]))
const showPartitions = ps => (ps.length === 0 ? '-' : ps.map(([t, p]) => `${hexOf(t)}:${p}`).join(','))
const showUser = u => (u == null ? 'null' : u.length === 0 ? '.' : u.toString('hex'))

function runTool(lines) {
  const r = spawnSync(args.tool, [], { input: lines.join('\n') + '\n', maxBuffer: 1 << 28, encoding: 'utf8' })
  if (r.error) fail(`cannot run ${args.tool}: ${r.error.message}`)
  if (r.status !== 0) fail(`${args.tool} exited with ${r.status}: ${r.stderr}`)
  const out = r.stdout.split('\n').filter(l => l.length > 0)
  if (out.length !== lines.length) fail(`${args.tool}: ${out.length} output lines for ${lines.length} inputs`)
  return out
}

// ---------------------------------------------------------------- cases
const cases = []
for (let i = 0; i < COUNT; i++) {
  const topics = randomTopics()
  const subUser = randomUserData()
  const assignment = randomAssignment()
  const asgUser = randomUserData()
  const version = below(4)
  const owned = flatten(randomAssignment())
  const generation = below(3) === 0 ? -1 : below(2 ** 31)
  cases.push({ topics, subUser, assignment, asgUser, version, owned, generation })
}

const lines = []
for (const c of cases) {
  const sub = kjs.MemberMetadata.encode({ version: 0, topics: c.topics, userData: c.subUser })
  const asg = kjs.MemberAssignment.encode({ version: c.version, assignment: c.assignment, userData: c.asgUser })
  lines.push(`ds ${sub.toString('hex')}`)
  lines.push(`da ${asg.toString('hex')}`)
  lines.push(`es0 ${showTopics(c.topics)} ${showUser(c.subUser)}`)
  lines.push(`ea ${showPartitions(flatten(c.assignment))}`)
  lines.push(`es ${showTopics(c.topics)} ${showPartitions(c.owned)} ${c.generation}`)
}
const out = runTool(lines)

let failures = 0
const counts = { a: 0, b: 0, c: 0 }
function check(ok, what, i, got, want) {
  if (ok) return true
  failures++
  if (failures <= 10) console.error(`MISMATCH ${what} (case ${i}, seed ${SEED}):\n  brook   ${got}\n  kafkajs ${want}`)
  return false
}

cases.forEach((c, i) => {
  const [ds, da, es0, ea, es] = out.slice(5 * i, 5 * i + 5)
  // (a) kafkajs -> brook
  const wantDs = `0 ${showTopics(c.topics)} ${showUser(c.subUser)} - -1`
  const wantDa = `${c.version} ${showPartitions(flatten(c.assignment))} ${showUser(c.asgUser)}`
  if (check(ds === wantDs, '(a) subscription decode', i, ds, wantDs) &
      check(da === wantDa, '(a) assignment decode', i, da, wantDa)) counts.a++
  // (b) byte identity
  const kSub0 = kjs.MemberMetadata.encode({ version: 0, topics: c.topics, userData: c.subUser }).toString('hex')
  const kAsg3 = kjs.MemberAssignment.encode({ version: 3, assignment: c.assignment, userData: null }).toString('hex')
  if (check(es0 === kSub0, '(b) v0 subscription bytes', i, es0, kSub0) &
      check(ea === kAsg3, '(b) v3 assignment bytes', i, ea, kAsg3)) counts.b++
  // (c) kafkajs reads brook's Java-style v3 subscription and assignment
  const dSub = kjs.MemberMetadata.decode(Buffer.from(es, 'hex'))
  const sorted = [...c.topics].sort()
  const dAsg = kjs.MemberAssignment.decode(Buffer.from(ea, 'hex'))
  const okSub = dSub.version === 3 && JSON.stringify(dSub.topics) === JSON.stringify(sorted) && dSub.userData === null
  const okAsg = dAsg.version === 3 && JSON.stringify(dAsg.assignment) === JSON.stringify(c.assignment) && dAsg.userData === null
  if (check(okSub, '(c) kafkajs decode of encode_subscription', i, JSON.stringify(dSub), JSON.stringify(sorted)) &
      check(okAsg, '(c) kafkajs decode of encode_assignment', i, JSON.stringify(dAsg), JSON.stringify(c.assignment)))
    counts.c++
})

console.log(`(a) kafkajs subscriptions (v0) and assignments (v0..3) decoded by brook: ${counts.a}/${COUNT}`)
console.log(`(b) brook's v0 subscription and v3 assignment bytes identical to kafkajs's: ${counts.b}/${COUNT}`)
console.log(`(c) brook's v3 subscription and assignment decoded by kafkajs: ${counts.c}/${COUNT}`)
if (failures > 0) fail(`${failures} mismatches (first ones above); seed ${SEED}`)
console.log(`${NAME}: OK`)
