#!/usr/bin/env node
// kafkajs 2.2.4 (npm, installed in tests/compat) against `brook serve`: an idempotence-free
// producer with acks=-1, admin create/list/delete topics, a consumer group whose committed
// offsets survive a broker restart, and describe groups.
//
//   node kafkajs_test.js --brook <brook executable> --work <scratch dir>
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

let kafkajs
try {
  const req = createRequire(path.join(__dirname, '..', 'compat', 'package.json'))
  if (req('kafkajs/package.json').version !== '2.2.4') fail(`kafkajs is not 2.2.4: ${HINT}`)
  kafkajs = req('kafkajs')
} catch (e) {
  fail(`kafkajs is not installed in tests/compat (${e.message.split('\n')[0]}): ${HINT}`)
}

const args = {}
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]
if (!args.brook || !args.work) fail('usage: kafkajs_test.js --brook B --work W')
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

async function main() {
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

main().catch((e) => fail(e.stack || String(e)))
