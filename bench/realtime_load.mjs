// Load generator for bench/realtime.py: many Yjs clients speaking the y-websocket protocol.
//
//   node realtime_load.mjs config.json   → prints one JSON line of results
//
// config: { targets: [{url, headers}], clientsPerDoc, writersPerDoc, rate (edits/s per writer),
//           duration (s), warmup (s), drain (s), connectBatch }
// Every edit appends a unique token ⟦id⟧ at the end of the text (never inside another token).
// A receiving client finds tokens in the inserted text of each remote change and records
// now - sendTime (one process, one clock). Expected receipts per edit: clientsPerDoc - 1.
import fs from 'node:fs'
import { performance } from 'node:perf_hooks'
import * as Y from 'yjs'
import * as syncProtocol from 'y-protocols/sync'
import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'
import WebSocket from 'ws'

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
const sendTimes = new Map() // id -> [time, docIndex, measured]
const receipts = new Map() // id -> count
const latencies = []
let nextId = config.idBase || 1
let measuring = false
let errors = 0

function makeClient (target, docIndex) {
  return new Promise((resolve) => {
    const doc = new Y.Doc()
    const text = doc.getText('content')
    const ws = new WebSocket(target.url, { headers: target.headers || {} })
    ws.binaryType = 'arraybuffer'
    const client = { doc, text, ws, synced: false, docIndex }
    text.observe((event, transaction) => {
      if (transaction.origin !== 'remote') return
      const now = performance.now()
      for (const op of event.changes.delta) {
        if (typeof op.insert !== 'string') continue
        for (const match of op.insert.matchAll(/⟦(\d+)⟧/g)) {
          const id = Number(match[1])
          receipts.set(id, (receipts.get(id) || 0) + 1)
          const sent = sendTimes.get(id)
          if (sent && sent[2]) latencies.push(now - sent[0])
        }
      }
    })
    doc.on('update', (update, origin) => {
      if (origin === 'remote' || ws.readyState !== WebSocket.OPEN) return
      const encoder = encoding.createEncoder()
      encoding.writeVarUint(encoder, 0)
      syncProtocol.writeUpdate(encoder, update)
      ws.send(encoding.toUint8Array(encoder))
    })
    ws.on('open', () => {
      const encoder = encoding.createEncoder()
      encoding.writeVarUint(encoder, 0)
      syncProtocol.writeSyncStep1(encoder, doc)
      ws.send(encoding.toUint8Array(encoder))
    })
    ws.on('message', (data) => {
      const decoder = decoding.createDecoder(new Uint8Array(data))
      const encoder = encoding.createEncoder()
      const type = decoding.readVarUint(decoder)
      if (type !== 0) return // awareness / auth: not measured
      encoding.writeVarUint(encoder, 0)
      const step = syncProtocol.readSyncMessage(decoder, encoder, doc, 'remote')
      if (encoding.length(encoder) > 1) ws.send(encoding.toUint8Array(encoder))
      if (step === syncProtocol.messageYjsSyncStep2 && !client.synced) {
        client.synced = true
        resolve(client)
      }
    })
    ws.on('error', () => { errors++ })
    ws.on('close', () => { if (!client.synced) resolve(client) })
  })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// mode "coldload": one writer fills the document (`updates` edits of `chunkChars` characters),
// leaves, and after `unloadWait` s new clients join one at a time (`loads`, `pause` s apart):
// open → synced (the whole document received) for each, and the length they received.
if (config.mode === 'coldload') {
  const target = config.targets[0]
  const writer = await makeClient(target, 0)
  const chunk = 'lorem ipsum dolor sit amet, '.repeat(Math.ceil(config.chunkChars / 28)).slice(0, config.chunkChars)
  for (let i = 0; i < config.updates; i++) {
    writer.text.insert(writer.text.length, chunk)
    if (i % 20 === 19) await sleep(5) // let the socket drain, as typing would
  }
  await sleep(config.settle * 1000)
  writer.ws.close()
  await sleep(config.unloadWait * 1000)
  const times = []
  let received = 0
  for (let i = 0; i < config.loads; i++) {
    const t0 = performance.now()
    const reader = await makeClient(target, 0)
    times.push(performance.now() - t0)
    received = reader.text.length
    reader.ws.close()
    await sleep(config.pause * 1000)
  }
  process.stdout.write(JSON.stringify({ times, written: writer.text.length, received, errors }) + '\n')
  process.exit(0)
}

const clients = []
const docs = config.targets.length
const started = performance.now()
// Connect in batches: a burst of handshakes larger than the server's listen backlog is refused.
const connectBatch = config.connectBatch || 20
const wanted = []
for (let d = 0; d < docs; d++) {
  for (let c = 0; c < config.clientsPerDoc; c++) wanted.push(d)
}
for (let i = 0; i < wanted.length; i += connectBatch) {
  const batch = wanted.slice(i, i + connectBatch).map((d) => makeClient(config.targets[d], d))
  clients.push(...await Promise.all(batch))
}
const connectSeconds = (performance.now() - started) / 1000
const unsynced = clients.filter((c) => !c.synced).length

const writers = clients.filter((client, index) => index % config.clientsPerDoc < config.writersPerDoc)
const period = 1000 / config.rate
const timers = writers.map((client) => {
  const edit = () => {
    if (client.ws.readyState !== WebSocket.OPEN) return
    const id = nextId++
    sendTimes.set(id, [performance.now(), client.docIndex, measuring])
    client.text.insert(client.text.length, `⟦${id}⟧`)
  }
  const offset = Math.random() * period
  let interval = null
  const timeout = setTimeout(() => { edit(); interval = setInterval(edit, period) }, offset)
  return () => { clearTimeout(timeout); if (interval) clearInterval(interval) }
})

await sleep(config.warmup * 1000)
measuring = true
process.stderr.write('measuring: start\n') // bench/realtime.py --profile samples this window
const measureStart = performance.now()
await sleep(config.duration * 1000)
measuring = false
process.stderr.write('measuring: stop\n')
const measuredSeconds = (performance.now() - measureStart) / 1000
timers.forEach((stop) => stop())
await sleep(config.drain * 1000)

let measuredEdits = 0
let drops = 0
let duplicates = 0
const expected = config.clientsPerDoc - 1
for (const [id, [, , measured]] of sendTimes) {
  if (!measured) continue
  measuredEdits++
  const got = receipts.get(id) || 0
  if (got < expected) drops += expected - got
  if (got > expected) duplicates += got - expected
}
// Content duplicated by a server would show as a token appearing twice in a converged text.
let textDuplicates = 0
for (const client of clients) {
  const seen = new Set()
  for (const match of client.text.toString().matchAll(/⟦(\d+)⟧/g)) {
    if (seen.has(match[1])) textDuplicates++
    seen.add(match[1])
  }
}
const converged = Array.from({ length: docs }, (_, d) => {
  const texts = clients.filter((c) => c.docIndex === d).map((c) => c.text.toString())
  return texts.every((t) => t === texts[0])
}).filter(Boolean).length

latencies.sort((a, b) => a - b)
const pct = (p) => latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] : null
process.stdout.write(JSON.stringify({
  clients: clients.length,
  unsynced,
  connectSeconds,
  measuredSeconds,
  edits: measuredEdits,
  sentEdits: nextId - (config.idBase || 1),
  receipts: latencies.length,
  p50: pct(0.5),
  p99: pct(0.99),
  max: latencies.length ? latencies[latencies.length - 1] : null,
  drops,
  duplicates: duplicates + textDuplicates,
  convergedDocs: converged,
  docs,
  errors
}) + '\n')
for (const client of clients) client.ws.terminate()
process.exit(0)
