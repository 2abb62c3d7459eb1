// kafkajs (npm) against a broker, for tests/integration/test_newest_kafkajs.py.
// kafkajs comes from newest_clients.kafkajs() (npm ci into the test cache;
// NODE_PATH points there).
//
//   node kafkajs_client.js produce BOOTSTRAP TOPIC FIRST COUNT
//   node kafkajs_client.js consume BOOTSTRAP GROUP TOPIC EXPECTED TIMEOUT_S
//   node kafkajs_client.js metadata BOOTSTRAP CREATE_TOPIC
//
// Prints JSON lines on stdout: events {"event": ...} and a last
// {"result": {...}}. kafkajs logs go to stderr (EDDY_CLIENT_DEBUG=1: DEBUG).
'use strict'

const { Kafka, Partitioners, logLevel } = require('kafkajs')

function emit (obj) { process.stdout.write(JSON.stringify(obj) + '\n') }
function errString (e) { return e ? `${e.name || 'Error'}: ${e.message}` + (e.type ? ` (${e.type})` : '') : null }

function client (bootstrap) {
  const level = process.env.EDDY_CLIENT_DEBUG ? logLevel.DEBUG : logLevel.WARN
  const logCreator = () => ({ namespace, level, label, log }) => {
    const { message, ...extra } = log
    process.stderr.write(`${new Date().toISOString()} ${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
  }
  return new Kafka({ clientId: 'eddy-it-kafkajs', brokers: [bootstrap], logLevel: level, logCreator,
    retry: { retries: 5, initialRetryTime: 200 } })
}

async function produce (bootstrap, topic, first, count) {
  const producer = client(bootstrap).producer({ idempotent: true, maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner })
  const out = { delivered: 0, errors: [], partitions: {} }
  try {
    await producer.connect()
    const batch = 50
    for (let start = first; start < first + count; start += batch) {
      const messages = []
      for (let i = start; i < Math.min(first + count, start + batch); i++) {
        messages.push({ key: `k-${i % 11}`, value: `v-${String(i).padStart(6, '0')}` })
      }
      try {
        // Resolves once every partition of the send acknowledged (acks -1);
        // the reply names the partitions, not a count per partition.
        const meta = await producer.send({ topic, acks: -1, messages })
        out.delivered += messages.length
        for (const m of meta) {
          if (m.errorCode) out.errors.push(`partition ${m.partition}: error code ${m.errorCode}`)
          out.partitions[m.partition] = true
        }
      } catch (e) {
        if (out.errors.length < 10) out.errors.push(errString(e))
      }
    }
  } catch (e) {
    out.errors.push(errString(e))
  } finally {
    await producer.disconnect().catch(e => out.errors.push('disconnect: ' + errString(e)))
  }
  emit({ result: out })
}

async function consume (bootstrap, group, topic, expected, timeoutS) {
  const consumer = client(bootstrap).consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 1000,
    maxWaitTimeInMs: 500 })
  const out = { records: [], errors: [], commit_error: null, committed: {} }
  const next = {}  // "topic-partition" -> next offset to commit
  consumer.on(consumer.events.GROUP_JOIN, e => {
    const assigned = []
    for (const [t, ps] of Object.entries(e.payload.memberAssignment)) for (const p of ps) assigned.push([t, p])
    emit({ event: 'assigned', partitions: assigned.sort() })
  })
  consumer.on(consumer.events.CRASH, e => out.errors.push('crash: ' + errString(e.payload.error)))
  let finish
  const done = new Promise(resolve => { finish = resolve })
  const timer = setTimeout(() => finish('timeout'), timeoutS * 1000)
  try {
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        if (out.records.length >= expected) return
        out.records.push([topic, partition, Number(message.offset), message.value.toString()])
        next[`${topic}\u0000${partition}`] = (BigInt(message.offset) + 1n).toString()
        if (out.records.length >= expected) finish('done')
      }
    })
    await done
    clearTimeout(timer)
    await consumer.pause([{ topic }])
    const offsets = Object.entries(next).map(([k, offset]) => {
      const [t, p] = k.split('\u0000')
      return { topic: t, partition: Number(p), offset }
    })
    try {
      if (offsets.length) await consumer.commitOffsets(offsets)
      for (const o of offsets) out.committed[`${o.topic}-${o.partition}`] = Number(o.offset)
    } catch (e) {
      out.commit_error = errString(e)
    }
  } catch (e) {
    clearTimeout(timer)
    out.errors.push(errString(e))
  } finally {
    await consumer.disconnect().catch(e => out.errors.push('disconnect: ' + errString(e)))
  }
  emit({ result: out })
}

async function metadata (bootstrap, create) {
  const admin = client(bootstrap).admin()
  const out = {}
  try {
    await admin.connect()
    try {
      out.create_result = await admin.createTopics({ topics: [{ topic: create, numPartitions: 2, replicationFactor: 1 }],
        waitForLeaders: true, timeout: 10000 })
      out.create_error = null
    } catch (e) { out.create_error = errString(e) }
    try { out.list_topics = (await admin.listTopics()).sort() } catch (e) { out.list_topics_error = errString(e) }
    try {
      const md = await admin.fetchTopicMetadata()
      out.topics = {}
      for (const t of md.topics) out.topics[t.name] = { partitions: t.partitions.length }
    } catch (e) { out.fetch_topic_metadata_error = errString(e) }
    try {
      const cluster = await admin.describeCluster()
      out.brokers = cluster.brokers.map(b => `${b.host}:${b.port}`).sort()
      out.controller = cluster.controller
    } catch (e) { out.describe_cluster_error = errString(e) }
    try {
      const offsets = await admin.fetchTopicOffsets(create)
      out.end_offsets = {}
      for (const o of offsets) out.end_offsets[o.partition] = Number(o.high)
    } catch (e) { out.fetch_topic_offsets_error = errString(e) }
  } catch (e) {
    out.connect_error = errString(e)
  } finally {
    await admin.disconnect().catch(() => {})
  }
  emit({ result: out })
}

async function main () {
  const a = process.argv.slice(2)
  emit({ event: 'versions', kafkajs: require('kafkajs/package.json').version, node: process.version })
  if (a.length === 5 && a[0] === 'produce') await produce(a[1], a[2], Number(a[3]), Number(a[4]))
  else if (a.length === 6 && a[0] === 'consume') await consume(a[1], a[2], a[3], Number(a[4]), Number(a[5]))
  else if (a.length === 3 && a[0] === 'metadata') await metadata(a[1], a[2])
  else {
    process.stderr.write('usage: kafkajs_client.js produce|consume|metadata ...\n')
    process.exit(2)
  }
}

main().then(() => process.exit(0), e => { process.stderr.write(String(e && e.stack) + '\n'); process.exit(1) })
