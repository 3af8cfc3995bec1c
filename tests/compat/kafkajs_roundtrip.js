#!/usr/bin/env node
// Cross-implementation check of RecordBatch v2 between brook and kafkajs 2.2.4
// (an independent JavaScript implementation of Kafka's protocol).
//
//   node kafkajs_roundtrip.js --tool <path to brook_compat_tool> [--seed N] [--count N]
//
// For seeded random batches (null keys/values, empty bytes, multi-byte UTF-8 and
// repeated header keys, large and negative timestamp deltas, large offsets):
//   (a) kafkajs encodes -> brook parses (CRC verified): every field matches the input.
//   (b) brook encodes -> kafkajs decodes: every field matches the input; header order is
//       checked with kafkajs's own record/header primitives, the CRC with kafkajs's crc32C.
//   (c) given the same input, both encoders produce identical bytes.
//   (d) brook rejects kafkajs batches with a flipped bit (CRC verification on brook's side).
//
// What kafkajs 2.2.4 cannot express, so (a)/(c) leave it to (b):
//   - null header values: its Record encoder calls Buffer.byteLength(null) in sizeOfHeaders and throws;
//   - interleaved repeated header keys (a, b, a): headers are a JS object, repeats are grouped per key;
//   - LogAppendTime: its RecordBatch encoder always writes timestamp type 0.
// Its encoder takes every batch header field as a parameter (partitionLeaderEpoch, producerId,
// producerEpoch, firstSequence default to 0/-1/0/0, so they are passed explicitly as brook's
// values), which is what makes byte identity (c) possible.
// Its decoder does NOT verify the CRC ("The library is currently not performing CRC
// validations", recordBatch/v0/decoder.js); this script demonstrates that and checks the CRC
// of brook's bytes itself with kafkajs's crc32C.
'use strict'

const { spawnSync } = require('child_process')

const HINT = 'run `npm ci --prefix tests/compat` (scripts/test.sh does this)'

function fail(msg) {
  console.error(`compat_kafkajs_record_batch: FAILED: ${msg}`)
  process.exit(1)
}

let kjs
try {
  const pkg = require('kafkajs/package.json')
  if (pkg.version !== '2.2.4') fail(`kafkajs ${pkg.version} is installed, expected 2.2.4: ${HINT}`)
  kjs = {
    RecordBatch: require('kafkajs/src/protocol/recordBatch/v0').RecordBatch,
    Record: require('kafkajs/src/protocol/recordBatch/record/v0'),
    decodeBatch: require('kafkajs/src/protocol/recordBatch/v0/decoder'),
    HeaderDecoder: require('kafkajs/src/protocol/recordBatch/header/v0/decoder'),
    Decoder: require('kafkajs/src/protocol/decoder'),
    crc32C: require('kafkajs/src/protocol/recordBatch/crc32C'),
    TimestampTypes: require('kafkajs/src/protocol/timestampTypes'),
  }
} catch (e) {
  fail(`kafkajs is not installed next to this script (${e.message.split('\n')[0]}): ${HINT}`)
}

// ---------------------------------------------------------------- arguments
const args = { seed: '1', count: '300' }
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]
if (!args.tool) fail('usage: kafkajs_roundtrip.js --tool <brook_compat_tool> [--seed N] [--count N]')
const SEED = BigInt(args.seed)
const COUNT = Number(args.count)
console.log(`kafkajs_roundtrip: seed ${SEED} count ${COUNT} (rerun with --seed ${SEED} to reproduce)`)

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
const bigBelow = n => next64() % n // BigInt [0, n)
const chance = pct => below(100) < pct
const pick = xs => xs[below(xs.length)]

function blob(maxLen) {
  const b = Buffer.alloc(below(maxLen + 1))
  for (let i = 0; i < b.length; i++) b[i] = below(256)
  return b
}
function nullableBlob(maxLen) {
  const k = below(10)
  if (k === 0) return null
  if (k === 1) return Buffer.alloc(0)
  if (k === 2) return blob(300) // 2-byte length varints
  return blob(maxLen)
}

// Header keys: multi-byte UTF-8 (2, 3 and 4 bytes), empty. No integer-like keys: a JS object
// lists those first whatever the insertion order, which would reorder kafkajs's headers.
const HEADER_KEYS = ['a', 'trace-id', 'schlüssel', '鍵', '🔑-key', '', 'content-type', 'ключ', 'é']

// One batch spec. kafkajsEncodable: grouped repeated keys and no null header values.
function genBatch(kafkajsEncodable) {
  const n = chance(5) ? 1 + below(200) : 1 + below(12)
  const baseTs = (1n << 41n) + bigBelow(1n << 42n)
  const records = []
  for (let i = 0; i < n; i++) {
    let delta
    switch (below(5)) {
      case 0: delta = 0n; break
      case 1: delta = bigBelow(2001n) - 1000n; break
      case 2: delta = bigBelow(1n << 41n) - (1n << 40n); break // large, either sign
      case 3: delta = -bigBelow(baseTs) - 1n; break // large negative, ts stays >= 0
      default: delta = bigBelow(100000n)
    }
    const headers = [] // flat list [{key, value}]
    if (kafkajsEncodable) {
      const nk = below(4)
      const used = new Set()
      for (let k = 0; k < nk; k++) {
        const key = pick(HEADER_KEYS)
        if (used.has(key)) continue
        used.add(key)
        const nv = chance(30) ? 2 + below(2) : 1 // repeated keys
        for (let v = 0; v < nv; v++) headers.push({ key, value: chance(15) ? Buffer.alloc(0) : blob(12) })
      }
    } else {
      const nh = below(6)
      for (let k = 0; k < nh; k++) headers.push({ key: pick(HEADER_KEYS), value: nullableBlob(12) })
    }
    records.push({ ts: baseTs + delta, key: nullableBlob(16), value: nullableBlob(64), headers })
  }
  return {
    baseOffset: chance(20) ? 0n : bigBelow(1n << 62n),
    partitionLeaderEpoch: chance(30) ? -1 : below(2 ** 31),
    producerId: chance(50) ? -1n : bigBelow(1n << 62n),
    producerEpoch: chance(50) ? -1 : below(32768),
    baseSequence: chance(50) ? -1 : below(2 ** 31),
    transactional: chance(20),
    appendTime: !kafkajsEncodable && chance(20) ? (1n << 41n) + bigBelow(1n << 30n) : null,
    records,
  }
}

// ---------------------------------------------------------------- expectations
const hexOrNull = b => (b === null ? null : b.toString('hex'))
const keyHex = k => Buffer.from(k, 'utf8').toString('hex')

function expected(spec) {
  const n = spec.records.length
  let maxTs = spec.records[0].ts
  for (const r of spec.records) if (r.ts > maxTs) maxTs = r.ts
  const logAppend = spec.appendTime !== null
  return {
    baseOffset: spec.baseOffset.toString(),
    partitionLeaderEpoch: spec.partitionLeaderEpoch,
    magic: 2,
    attributes: (spec.transactional ? 0x10 : 0) | (logAppend ? 0x08 : 0),
    lastOffsetDelta: n - 1,
    baseTimestamp: spec.records[0].ts.toString(),
    maxTimestamp: (logAppend ? spec.appendTime : maxTs).toString(),
    producerId: spec.producerId.toString(),
    producerEpoch: spec.producerEpoch,
    baseSequence: spec.baseSequence,
    recordsCount: n,
    records: spec.records.map((r, i) => ({
      offset: (spec.baseOffset + BigInt(i)).toString(),
      timestamp: (logAppend ? spec.appendTime : r.ts).toString(),
      key: hexOrNull(r.key),
      value: hexOrNull(r.value),
      headers: r.headers.map(h => [keyHex(h.key), hexOrNull(h.value)]),
    })),
  }
}

// ---------------------------------------------------------------- kafkajs encode / decode
async function kafkajsEncode(spec) {
  const base = spec.records[0].ts
  const records = spec.records.map((r, i) => {
    const obj = {}
    for (const h of r.headers) {
      if (!Object.prototype.hasOwnProperty.call(obj, h.key)) obj[h.key] = h.value
      else obj[h.key] = [].concat(obj[h.key], [h.value])
    }
    return kjs.Record({
      offsetDelta: i,
      timestampDelta: (r.ts - base).toString(),
      key: r.key,
      value: r.value,
      headers: obj,
    })
  })
  const e = expected(spec)
  const enc = await kjs.RecordBatch({
    firstOffset: spec.baseOffset.toString(),
    firstTimestamp: e.baseTimestamp,
    maxTimestamp: e.maxTimestamp,
    partitionLeaderEpoch: spec.partitionLeaderEpoch,
    lastOffsetDelta: spec.records.length - 1,
    transactional: spec.transactional,
    producerId: spec.producerId.toString(),
    producerEpoch: spec.producerEpoch,
    firstSequence: spec.baseSequence,
    records,
  })
  return enc.buffer
}

// Header order is lost in kafkajs's decoded object, so walk the records with kafkajs's own
// primitives (the same ones its record decoder uses) to get headers in wire order.
function kafkajsOrderedHeaders(buf) {
  const d = new kjs.Decoder(buf)
  d.forward(61)
  const out = []
  while (d.offset < buf.length) {
    const rec = new kjs.Decoder(d.readVarIntBytes())
    rec.readInt8()
    rec.readVarLong()
    rec.readVarInt()
    rec.readVarIntBytes()
    rec.readVarIntBytes()
    out.push(rec.readVarIntArray(kjs.HeaderDecoder).map(h => [keyHex(h.key), hexOrNull(h.value)]))
    if (rec.offset !== rec.buffer.length) throw new Error('record length does not match its contents')
  }
  return out
}

async function kafkajsDecode(buf) {
  const b = await kjs.decodeBatch(new kjs.Decoder(buf))
  const ordered = kafkajsOrderedHeaders(buf)
  return {
    baseOffset: b.firstOffset,
    partitionLeaderEpoch: b.partitionLeaderEpoch,
    magic: b.records.length > 0 ? b.records[0].magicByte : undefined, // kept per record by kafkajs
    // kafkajs exposes the attribute bits it understands, not the raw field.
    attributes:
      (b.inTransaction ? 0x10 : 0) |
      (b.timestampType === kjs.TimestampTypes.LOG_APPEND_TIME ? 0x08 : 0) |
      (b.isControlBatch ? 0x20 : 0),
    lastOffsetDelta: b.lastOffsetDelta,
    baseTimestamp: b.firstTimestamp,
    maxTimestamp: b.maxTimestamp,
    producerId: b.producerId,
    producerEpoch: b.producerEpoch,
    baseSequence: b.firstSequence,
    recordsCount: b.records.length,
    records: b.records.map((r, i) => ({
      offset: r.offset,
      timestamp: String(r.timestamp),
      key: hexOrNull(r.key),
      value: hexOrNull(r.value),
      headers: ordered[i],
      headerObject: r.headers,
    })),
  }
}

// kafkajs's decoded header object: key -> value, or key -> [values] when repeated.
function headerObjectMatches(obj, flat) {
  const want = new Map()
  for (const [k, v] of flat) {
    const key = Buffer.from(k, 'hex').toString('utf8')
    if (!want.has(key)) want.set(key, [])
    want.get(key).push(v)
  }
  const gotKeys = Object.keys(obj)
  if (gotKeys.length !== want.size) return false
  for (const key of gotKeys) {
    const got = (Array.isArray(obj[key]) ? obj[key] : [obj[key]]).map(hexOrNull)
    if (JSON.stringify(got) !== JSON.stringify(want.get(key))) return false
  }
  return true
}

// ---------------------------------------------------------------- brook tool
function runTool(mode, lines) {
  const r = spawnSync(args.tool, [mode], { input: lines.join('\n') + '\n', maxBuffer: 1 << 30, encoding: 'utf8' })
  if (r.error) fail(`cannot run ${args.tool}: ${r.error.message}`)
  if (r.status !== 0) fail(`${args.tool} ${mode} exited with ${r.status}: ${r.stderr}`)
  const out = r.stdout.split('\n').filter(l => l.length > 0)
  if (out.length !== lines.length) fail(`${args.tool} ${mode}: ${out.length} output lines for ${lines.length} inputs`)
  return out
}

const tok = b => (b === null ? '~' : b.length === 0 ? '.' : b.toString('hex'))
function specLine(spec) {
  const t = [
    spec.baseOffset, spec.partitionLeaderEpoch, spec.producerId, spec.producerEpoch, spec.baseSequence,
    spec.transactional ? 1 : 0, spec.appendTime === null ? '~' : spec.appendTime, spec.records.length,
  ]
  for (const r of spec.records) {
    t.push(r.ts, tok(r.key), tok(r.value), r.headers.length)
    for (const h of r.headers) t.push(tok(Buffer.from(h.key, 'utf8')), tok(h.value))
  }
  return t.join(' ')
}

// ---------------------------------------------------------------- checks
let failures = 0
function mismatch(what, i, spec, got, want) {
  failures++
  if (failures <= 5) {
    console.error(`MISMATCH ${what} (batch ${i}, seed ${SEED})`)
    console.error('  spec: ' + specLine(spec))
    console.error('  got:  ' + JSON.stringify(got))
    console.error('  want: ' + JSON.stringify(want))
  }
}
const FIELDS = ['baseOffset', 'partitionLeaderEpoch', 'magic', 'attributes', 'lastOffsetDelta', 'baseTimestamp',
  'maxTimestamp', 'producerId', 'producerEpoch', 'baseSequence', 'recordsCount']
function compare(what, i, spec, got, want) {
  for (const f of FIELDS) if (got[f] !== want[f]) return mismatch(`${what}: ${f}`, i, spec, got[f], want[f])
  for (let r = 0; r < want.records.length; r++) {
    const g = got.records[r]
    const w = want.records[r]
    for (const f of ['offset', 'timestamp', 'key', 'value']) {
      if (g[f] !== w[f]) return mismatch(`${what}: record ${r} ${f}`, i, spec, g[f], w[f])
    }
    if (JSON.stringify(g.headers) !== JSON.stringify(w.headers)) {
      return mismatch(`${what}: record ${r} headers`, i, spec, g.headers, w.headers)
    }
    if (g.headerObject !== undefined && !headerObjectMatches(g.headerObject, w.headers)) {
      return mismatch(`${what}: record ${r} kafkajs header object`, i, spec, g.headerObject, w.headers)
    }
  }
}

async function main() {
  const common = Array.from({ length: COUNT }, () => genBatch(true))
  const brookOnly = Array.from({ length: COUNT }, () => genBatch(false))

  // (a) kafkajs encodes -> brook parses.
  const kBufs = []
  for (const s of common) kBufs.push(await kafkajsEncode(s))
  const parsed = runTool('parse', kBufs.map(b => b.toString('hex'))).map(l => JSON.parse(l))
  parsed.forEach((p, i) => {
    if (!p.ok) return mismatch('(a) brook rejected a kafkajs batch', i, common[i], p, 'ok')
    const want = expected(common[i])
    compare('(a) kafkajs -> brook', i, common[i], p, want)
    if (p.sizeBytes !== kBufs[i].length) mismatch('(a) sizeBytes', i, common[i], p.sizeBytes, kBufs[i].length)
    if (p.batchLength !== kBufs[i].length - 12) mismatch('(a) batchLength', i, common[i], p.batchLength, kBufs[i].length - 12)
    if (p.crc !== kBufs[i].readUInt32BE(17)) mismatch('(a) crc', i, common[i], p.crc, kBufs[i].readUInt32BE(17))
  })
  const failuresA = failures

  // (b) brook encodes -> kafkajs decodes; both kinds of specs.
  const all = common.concat(brookOnly)
  const built = runTool('build', all.map(specLine)).map(h => Buffer.from(h, 'hex'))
  for (let i = 0; i < all.length; i++) {
    const buf = built[i]
    const crc = kjs.crc32C(buf.subarray(21))
    if (crc !== buf.readUInt32BE(17)) mismatch('(b) CRC of brook bytes per kafkajs crc32C', i, all[i], buf.readUInt32BE(17), crc)
    if (buf.readInt32BE(8) !== buf.length - 12) mismatch('(b) batchLength', i, all[i], buf.readInt32BE(8), buf.length - 12)
    let got
    try {
      got = await kafkajsDecode(buf)
    } catch (e) {
      mismatch('(b) kafkajs failed to decode a brook batch', i, all[i], e.message, 'ok')
      continue
    }
    compare('(b) brook -> kafkajs', i, all[i], got, expected(all[i]))
  }
  const failuresB = failures - failuresA

  // (c) identical bytes for the same input.
  let identical = 0
  for (let i = 0; i < common.length; i++) {
    if (built[i].equals(kBufs[i])) identical++
    else mismatch('(c) bytes differ', i, common[i], built[i].toString('hex'), kBufs[i].toString('hex'))
  }

  // (d) brook verifies the CRC: flip one bit anywhere the CRC covers (attributes onward;
  // a flipped compression bit must read as corruption too, since the CRC is checked first).
  const flipped = kBufs.slice(0, 100).map(b => {
    const c = Buffer.from(b)
    const pos = 21 + below(c.length - 21)
    c[pos] ^= 1 << below(8)
    return c.toString('hex')
  })
  const rejected = runTool('parse', flipped).map(l => JSON.parse(l))
  let crcRejects = 0
  rejected.forEach((p, i) => {
    if (p.ok || p.code !== 'CORRUPT_MESSAGE') mismatch('(d) brook accepted a corrupted batch', i, common[i], p, 'CORRUPT_MESSAGE')
    else if (/CRC/.test(p.message)) crcRejects++
  })
  if (crcRejects === 0) mismatch('(d) no rejection came from the CRC check', 0, common[0], rejected[0], 'CRC mismatch')

  // Observation: kafkajs's decoder does not verify the CRC.
  const corrupt = Buffer.from(built[0])
  corrupt[corrupt.length - 1] ^= 0x40 // last byte of the last record (its headers or value)
  let kafkajsVerifiesCrc
  try {
    await kjs.decodeBatch(new kjs.Decoder(corrupt))
    kafkajsVerifiesCrc = false
  } catch (e) {
    kafkajsVerifiesCrc = true
  }

  console.log(`(a) kafkajs -> brook: ${common.length - failuresA}/${common.length} batches match`)
  console.log(`(b) brook -> kafkajs: ${all.length - failuresB}/${all.length} batches match ` +
    `(${brookOnly.length} with null header values, interleaved repeated keys or LogAppendTime)`)
  console.log(`(c) identical bytes: ${identical}/${common.length}`)
  console.log(`(d) brook rejected ${rejected.filter(p => !p.ok).length}/${rejected.length} bit-flipped kafkajs batches ` +
    `(${crcRejects} by the CRC check)`)
  console.log(`note: kafkajs 2.2.4 decoder ${kafkajsVerifiesCrc ? 'rejected' : 'accepted'} a batch with a corrupted byte ` +
    `(${kafkajsVerifiesCrc ? 'it verifies' : 'it does not verify'} the CRC)`)
  if (failures > 0) fail(`${failures} mismatches (first ones above); seed ${SEED}`)
  console.log('compat_kafkajs_record_batch: OK')
}

main().catch(e => fail(e.stack || String(e)))
