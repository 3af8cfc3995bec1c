#!/usr/bin/env node
// kafkajs 2.2.4 (npm, installed in tests/compat) against `brook serve`.
//
// --scenario basic (the default): an idempotence-free producer with acks=-1, admin
//   create/list/delete topics, a consumer group whose committed offsets survive a broker
//   restart, and describe groups.
// --scenario compression: seeded random records produced with each codec (gzip: kafkajs's own;
//   snappy: kafkajs-snappy; lz4 and zstd: the shims below over lz4js and @bokuweb/zstd-wasm),
//   read back by a kafkajs consumer, then every stored batch read from the segment files: its
//   CRC-32C holds and its codec is the producer's (brook keeps producers' batches as they
//   came). When `brook produce` has --compression, brook writes each codec's batches into
//   the data directory and kafkajs reads them back through the broker too.
//
//   node kafkajs_test.js --brook <brook executable> --work <scratch dir> [--scenario S]
//   BROOK_KAFKAJS_SEED=N replays a compression seed it printed; BROOK_KAFKAJS_RECORDS=N
//   records per codec (500)
'use strict'

const { spawn } = require('child_process')
const fs = require('fs')
const path = require('path')
const { createRequire } = require('module')

const NAME = 'clients_kafkajs'
const HINT = 'run `npm ci --prefix tests/compat` (scripts/test.sh does this)'

function fail(msg) {
  console.error(`${NAME}: FAILED: ${msg}`)
  process.exit(1)
}
function check(cond, msg) {
  if (!cond) fail(msg)
}

const req = createRequire(path.join(__dirname, '..', 'compat', 'package.json'))
let kafkajs
try {
  if (req('kafkajs/package.json').version !== '2.2.4') fail(`kafkajs is not 2.2.4: ${HINT}`)
  kafkajs = req('kafkajs')
} catch (e) {
  fail(`kafkajs is not installed in tests/compat (${e.message.split('\n')[0]}): ${HINT}`)
}

const args = {}
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]
if (!args.brook || !args.work) fail('usage: kafkajs_test.js --brook B --work W [--scenario basic|compression]')
const SCENARIO = args.scenario || 'basic'
fs.rmSync(args.work, { recursive: true, force: true })
fs.mkdirSync(args.work, { recursive: true })
const DATA = path.join(args.work, 'data')

// A brook serve child on 127.0.0.1:0; resolves with { address, stop }.
function startBroker() {
  return new Promise((resolve, reject) => {
    const log = fs.openSync(path.join(args.work, 'serve.log'), 'a')
    const child = spawn(args.brook, ['serve', '--data-dir', DATA, '--listen', '127.0.0.1:0'], {
      stdio: ['ignore', 'pipe', log],
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error('brook serve printed no line within 30 s'))
    }, 30000)
    let buf = ''
    child.stdout.on('data', (d) => {
      buf += d
      const nl = buf.indexOf('\n')
      if (nl < 0) return
      clearTimeout(timer)
      const line = buf.slice(0, nl)
      if (!line.startsWith('listening on ')) return reject(new Error(`first line ${JSON.stringify(line)}`))
      const stop = () =>
        new Promise((res, rej) => {
          const t = setTimeout(() => {
            child.kill('SIGKILL')
            rej(new Error('brook serve did not exit within 60 s of SIGTERM'))
          }, 60000)
          child.on('exit', (code) => {
            clearTimeout(t)
            code === 0 ? res() : rej(new Error(`brook serve exited with ${code} after SIGTERM`))
          })
          child.kill('SIGTERM')
        })
      resolve({ address: line.slice('listening on '.length).trim(), stop })
    })
    child.on('exit', (code) => reject(new Error(`brook serve exited with ${code} before listening`)))
  })
}

function client(address) {
  return new kafkajs.Kafka({
    clientId: 'brook-kafkajs-test',
    brokers: [address],
    logLevel: kafkajs.logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100 },
  })
}

async function produce(kafka, topic, from, n) {
  const p = kafka.producer({ allowAutoTopicCreation: false })
  await p.connect()
  const messages = []
  for (let i = from; i < from + n; ++i) messages.push({ key: `k${i}`, value: `v${i}` })
  const res = await p.send({ topic, acks: -1, messages })
  await p.disconnect()
  return res
}

// Runs a group consumer until it has `want` messages; commits as it goes.
async function consume(kafka, groupId, topic, want) {
  const c = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 1000, maxWaitTimeInMs: 200 })
  await c.connect()
  await c.subscribe({ topic, fromBeginning: true })
  const got = new Map()
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`group ${groupId} read ${got.size} of ${want} in 30 s`)), 30000)
    c.run({
      autoCommit: true,
      autoCommitInterval: 100,
      eachMessage: async ({ partition, message }) => {
        got.set(message.key.toString(), { partition, offset: message.offset, value: message.value.toString() })
        if (got.size >= want) {
          clearTimeout(t)
          resolve()
        }
      },
    }).catch(reject)
  })
  await c.disconnect() // commits what was consumed
  return got
}

async function basic() {
  let broker = await startBroker()
  let kafka = client(broker.address)
  const admin = kafka.admin()
  await admin.connect()
  check(await admin.createTopics({ topics: [{ topic: 'js-orders', numPartitions: 3 }] }), 'createTopics: not created')
  check(!(await admin.createTopics({ topics: [{ topic: 'js-orders', numPartitions: 3 }] })), 'created twice')
  check((await admin.listTopics()).includes('js-orders'), 'listTopics misses js-orders')
  await admin.createTopics({ topics: [{ topic: 'js-doomed' }] })
  await admin.deleteTopics({ topics: ['js-doomed'] })
  check(!(await admin.listTopics()).includes('js-doomed'), 'js-doomed listed after deleteTopics')

  const res = await produce(kafka, 'js-orders', 0, 300)
  check(res.every((r) => r.errorCode === 0), `produce: ${JSON.stringify(res)}`)
  const got = await consume(kafka, 'jsg', 'js-orders', 300)
  for (let i = 0; i < 300; ++i) check(got.get(`k${i}`)?.value === `v${i}`, `k${i} read as ${JSON.stringify(got.get(`k${i}`))}`)
  const described = await admin.describeGroups(['jsg'])
  check(described.groups[0].groupId === 'jsg' && described.groups[0].errorCode === 0, `describeGroups: ${JSON.stringify(described)}`)
  const offsets = await admin.fetchOffsets({ groupId: 'jsg', topics: ['js-orders'] })
  const committed = offsets[0].partitions.reduce((s, p) => s + Number(p.offset), 0)
  check(committed === 300, `committed offsets add up to ${committed}, not 300`)
  await admin.disconnect()
  await broker.stop()

  // Committed offsets survive a restart: the group reads only what came after.
  broker = await startBroker()
  kafka = client(broker.address)
  await produce(kafka, 'js-orders', 300, 20)
  const after = await consume(kafka, 'jsg', 'js-orders', 20)
  const keys = [...after.keys()].map((k) => Number(k.slice(1))).sort((a, b) => a - b)
  check(keys.length === 20 && keys[0] === 300 && keys[19] === 319, `after a restart the group read ${keys}`)
  await broker.stop()
  console.log('kafkajs: admin, acks=-1 producer, group with commits across a restart, describeGroups: ok')
}

// ---- compression --------------------------------------------------------------------------

const CODECS = ['gzip', 'snappy', 'lz4', 'zstd']
const CODEC_IDS = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 }
const PARTITIONS = 3

// An LZ4 frame as Kafka's Java client writes one: FLG 0x60 (version 01, independent blocks, no
// checksums, no content size), BD 0x40 (64 KiB blocks), the header checksum (the second byte
// of XXH32, seed 0, of FLG and BD), each 64 KiB of input compressed on its own with lz4js (a
// fresh hash table per block, so no block refers to an earlier one) or stored when that does
// not shrink it (high bit of the block size), then the end mark. lz4js's own compress() writes
// FLG 0x40 (linked blocks, which Kafka's Java reader refuses) and 4 MiB blocks.
function lz4Frame(lz4, xxh32, input) {
  const header = Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0])
  header[6] = (xxh32.hash(0, header, 4, 2) >>> 8) & 0xff
  const parts = [header]
  for (let at = 0; at < input.length; at += 65536) {
    const block = input.subarray(at, Math.min(at + 65536, input.length))
    const out = Buffer.alloc(lz4.compressBound(block.length))
    const n = lz4.compressBlock(block, out, 0, block.length, new Uint32Array(1 << 16))
    const size = Buffer.alloc(4)
    if (n === 0 || n >= block.length) {
      size.writeUInt32LE((0x80000000 | block.length) >>> 0)
      parts.push(size, block)
    } else {
      size.writeUInt32LE(n)
      parts.push(size, out.subarray(0, n))
    }
  }
  parts.push(Buffer.alloc(4))
  return Buffer.concat(parts)
}

// kafkajs has gzip; snappy, lz4 and zstd are codecs a user registers: () => { compress(encoder),
// decompress(buffer) }, each resolving to a Buffer (kafkajs src/protocol/message/compression).
async function registerCodecs() {
  let snappy, lz4, xxh32, zstd
  try {
    snappy = req('kafkajs-snappy')
    lz4 = req('lz4js')
    xxh32 = req('lz4js/xxh32.js')
    zstd = req('@bokuweb/zstd-wasm')
  } catch (e) {
    fail(`a codec package is not installed in tests/compat (${e.message.split('\n')[0]}): ${HINT}`)
  }
  await zstd.init()
  const { CompressionTypes, CompressionCodecs } = kafkajs
  CompressionCodecs[CompressionTypes.Snappy] = snappy
  CompressionCodecs[CompressionTypes.LZ4] = () => ({
    compress: async (encoder) => lz4Frame(lz4, xxh32, encoder.buffer),
    decompress: async (buffer) => Buffer.from(lz4.decompress(buffer)),
  })
  CompressionCodecs[CompressionTypes.ZSTD] = () => ({
    compress: async (encoder) => Buffer.from(zstd.compress(encoder.buffer, 3)),
    decompress: async (buffer) => Buffer.from(zstd.decompress(buffer)),
  })
  return { gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy, lz4: CompressionTypes.LZ4, zstd: CompressionTypes.ZSTD }
}

// mulberry32: a seeded generator in [0, 1).
function generator(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet']

// n records { key, value, headers }: most values JSON-like and compressible, some random
// bytes, some long runs (batches then span several 64 KiB lz4 blocks), a few null values and
// headers on some. text=true: printable values without tabs or newlines and no headers or
// nulls (what `brook produce` reads, one "key\tvalue" line per record).
function randomRecords(rand, codec, n, text) {
  const int = (k) => Math.floor(rand() * k)
  const pick = (a) => a[int(a.length)]
  const out = []
  for (let i = 0; i < n; ++i) {
    let key = `${codec}-${i}-`
    for (let j = int(12); j >= 0; --j) key += String.fromCharCode(97 + int(26))
    const kind = rand()
    let value
    if (!text && kind < 0.02) value = null
    else if (kind < 0.6) {
      const note = []
      for (let j = int(30); j > 0; --j) note.push(pick(WORDS))
      value = JSON.stringify({ id: i, user: `user-${int(100)}`, event: pick(['view', 'click', 'buy']), amount: int(1e6) / 100, note: note.join(' ') })
    } else if (kind < 0.85) {
      const len = 1 + int(300)
      if (text) {
        value = ''
        for (let j = 0; j < len; ++j) value += String.fromCharCode(33 + int(94))
      } else {
        value = Buffer.alloc(len)
        for (let j = 0; j < len; ++j) value[j] = int(256)
      }
    } else value = pick(WORDS).repeat(1 + int(10000))
    const headers = !text && rand() < 0.3 ? { trace: `t-${i}`, bin: Buffer.from([int(256), int(256), 0, 255]) } : undefined
    out.push({ key, value, headers })
  }
  return out
}

function asBuffer(v) {
  return v === null ? null : Buffer.isBuffer(v) ? v : Buffer.from(v)
}

// Reads `topic` from the beginning with a kafkajs consumer group until it has `want` records.
async function consumeAll(kafka, groupId, topic, want) {
  const c = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 1000, maxWaitTimeInMs: 200 })
  await c.connect()
  await c.subscribe({ topic, fromBeginning: true })
  const got = []
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${topic}: read ${got.length} of ${want} records in 60 s`)), 60000)
    c.run({
      eachMessage: async ({ partition, message }) => {
        got.push({ partition, offset: Number(message.offset), key: message.key.toString(), value: message.value, headers: message.headers })
        if (got.length >= want) {
          clearTimeout(t)
          resolve()
        }
      },
    }).catch(reject)
  })
  await c.disconnect()
  return got
}

// Every record came back once, with its value and headers, at consecutive offsets from 0 in
// each partition, in production order.
function checkRecords(what, produced, got) {
  check(got.length === produced.length, `${what}: read ${got.length} records, produced ${produced.length}`)
  const index = new Map(produced.map((r, i) => [r.key, i]))
  const next = new Map()
  const last = new Map()
  const seen = new Set()
  got.sort((a, b) => a.partition - b.partition || a.offset - b.offset)
  for (const r of got) {
    check(index.has(r.key), `${what}: read a key nobody produced: ${r.key}`)
    const i = index.get(r.key)
    const want = asBuffer(produced[i].value)
    check(want === null ? r.value === null : r.value !== null && want.equals(r.value),
      `${what}: ${r.key} read with value ${r.value && r.value.toString('hex', 0, 40)}, not ${want && want.toString('hex', 0, 40)}`)
    const wantHeaders = produced[i].headers || {}
    check(Object.keys(r.headers).length === Object.keys(wantHeaders).length &&
      Object.entries(wantHeaders).every(([k, v]) => r.headers[k] && asBuffer(v).equals(r.headers[k])),
      `${what}: ${r.key} read with headers ${JSON.stringify(r.headers)}`)
    check(r.offset === (next.get(r.partition) || 0), `${what}: partition ${r.partition}: offset ${r.offset}, expected ${next.get(r.partition) || 0}`)
    check(i > (last.has(r.partition) ? last.get(r.partition) : -1), `${what}: partition ${r.partition}: record ${i} after record ${last.get(r.partition)}`)
    next.set(r.partition, r.offset + 1)
    last.set(r.partition, i)
    seen.add(r.key)
  }
  check(seen.size === produced.length, `${what}: ${produced.length - seen.size} keys missing or duplicated`)
}

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256)
  for (let i = 0; i < 256; ++i) {
    let c = i
    for (let k = 0; k < 8; ++k) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1
    t[i] = c >>> 0
  }
  return t
})()
function crc32c(buf) {
  let c = 0xffffffff
  for (const b of buf) c = CRC32C_TABLE[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

// The batches in a partition's segment files, read here and not by brook: RecordBatch v2,
// baseOffset int64 at 0, batchLength int32 at 8 (the batch is 12 + batchLength bytes), magic
// at 16, CRC-32C at 17 over bytes 21.., attributes int16 at 21 (bits 0-2 the codec),
// lastOffsetDelta int32 at 23, recordsCount int32 at 57; big-endian.
function storedBatches(dir) {
  const out = []
  for (const name of fs.readdirSync(dir).filter((n) => n.endsWith('.log')).sort()) {
    const data = fs.readFileSync(path.join(dir, name))
    for (let pos = 0; pos < data.length;) {
      check(pos + 61 <= data.length, `${dir}/${name}: ${data.length - pos} bytes at ${pos} are less than a batch header`)
      const length = data.readInt32BE(pos + 8)
      const end = pos + 12 + length
      check(length >= 49 && end <= data.length && data[pos + 16] === 2, `${dir}/${name}: no magic-2 batch at byte ${pos}`)
      const base = Number(data.readBigInt64BE(pos))
      out.push({
        base, last: base + data.readInt32BE(pos + 23), count: data.readInt32BE(pos + 57),
        codec: data.readInt16BE(pos + 21) & 7, crcOk: crc32c(data.subarray(pos + 21, end)) === data.readUInt32BE(pos + 17),
      })
      pos = end
    }
  }
  return out
}

// Every batch of `topic` intact, at consecutive offsets, compressed with `codec`; n records.
function checkStored(what, topic, codec, n) {
  let total = 0
  const summary = []
  for (let p = 0; p < PARTITIONS; ++p) {
    const batches = storedBatches(path.join(DATA, `${topic}-${p}`))
    let offset = 0
    for (const b of batches) {
      const where = `${what}: ${topic}-${p}: batch at offset ${b.base}`
      check(b.crcOk, `${where}: its CRC-32C does not match its bytes`)
      check(b.base === offset && b.last - b.base + 1 === b.count, `${where}: offsets ${b.base}..${b.last}, ${b.count} records, expected base ${offset}`)
      check(b.codec === CODEC_IDS[codec], `${where}: stored with codec ${b.codec}, produced with ${codec} (${CODEC_IDS[codec]})`)
      offset = b.last + 1
    }
    total += offset
    summary.push(`${offset} records in ${batches.length} batches`)
  }
  check(total === n, `${what}: ${topic}: ${total} records on disk, ${n} produced`)
  console.log(`  ${what}: stored ${codec}: ${summary.join(', ')}`)
}

function runBrook(argv, input) {
  const { spawnSync } = require('child_process')
  const r = spawnSync(args.brook, argv, { input, timeout: 120000 })
  check(r.status === 0, `brook ${argv.join(' ')} exited with ${r.status}: ${r.stderr}`)
  return r.stdout.toString()
}

async function compression() {
  const t0 = Date.now()
  const types = await registerCodecs()
  const n = Number(process.env.BROOK_KAFKAJS_RECORDS || 500)
  // The same seed every run, shifted by BROOK_SEED_BASE as every seeded test is.
  const base = /^[0-9]+$/.test(process.env.BROOK_SEED_BASE || '') ? Number(process.env.BROOK_SEED_BASE) : 0
  const seed = Number(process.env.BROOK_KAFKAJS_SEED || 1 + base)
  console.log(`  compression: seed ${seed} (replay: BROOK_KAFKAJS_SEED=${seed})`)
  const rand = generator(seed)
  const produced = {}
  const text = {}
  for (const c of CODECS) {
    produced[c] = randomRecords(rand, c, n, false)
    text[c] = randomRecords(rand, c, n, true)
  }

  // kafkajs-compressed batches: kept as they came, read back by kafkajs.
  let broker = await startBroker()
  let kafka = client(broker.address)
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: CODECS.map((c) => ({ topic: `js-z-${c}`, numPartitions: PARTITIONS })) })
  await admin.disconnect()
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  for (const c of CODECS) {
    for (let at = 0; at < n; at += 100) {
      const res = await producer.send({ topic: `js-z-${c}`, acks: -1, compression: types[c], messages: produced[c].slice(at, at + 100) })
      check(res.every((r) => r.errorCode === 0), `${c} produce: ${JSON.stringify(res)}`)
    }
  }
  await producer.disconnect()
  for (const c of CODECS) checkRecords(`kafkajs ${c}`, produced[c], await consumeAll(kafka, `jsz-${c}`, `js-z-${c}`, n))
  await broker.stop()
  for (const c of CODECS) checkStored(`kafkajs ${c}`, `js-z-${c}`, c, n)

  // brook-compressed batches (brook produce --compression), read by kafkajs.
  const brookWrites = runBrook(['produce', '--help']).includes('--compression')
  if (brookWrites) {
    for (const c of CODECS) {
      runBrook(['topics', '--data-dir', DATA, '--create', '--topic', `js-b-${c}`, '--partitions', String(PARTITIONS)])
      runBrook(['produce', '--data-dir', DATA, '--topic', `js-b-${c}`, '--key-separator', '\t', '--compression', c],
        text[c].map((r) => `${r.key}\t${r.value}\n`).join(''))
      checkStored(`brook produce --compression ${c}`, `js-b-${c}`, c, n)
    }
    broker = await startBroker()
    kafka = client(broker.address)
    for (const c of CODECS) {
      checkRecords(`brook ${c}, read by kafkajs`, text[c], await consumeAll(kafka, `jsb-${c}`, `js-b-${c}`, n))
    }
    await broker.stop()
  }
  console.log(`kafkajs: ${n} records each with ${CODECS.join(', ')} produced, read back and stored with their codec` +
    (brookWrites ? ', brook-compressed batches of each codec read by kafkajs' : '; `brook produce` has no --compression: brook-compressed batches not read by kafkajs') +
    `: ok (seed ${seed}, ${((Date.now() - t0) / 1000).toFixed(1)} s)`)
}

if (SCENARIO === 'basic') basic().catch((e) => fail(e.stack || String(e)))
else if (SCENARIO === 'compression') compression().catch((e) => fail(e.stack || String(e)))
else fail(`unknown scenario ${SCENARIO}`)
