// A real Yjs + y-websocket client, driven by JSON lines on stdin; answers JSON lines on stdout.
//
//   node client.mjs <ws base url, e.g. ws://127.0.0.1:8000/ws/tasks/12> <api token>
//
// Commands: {"op":"wait_synced"} {"op":"get"} {"op":"insert","index":n,"text":s} (UTF-16 index)
// {"op":"delete","index":n,"length":n} (UTF-16) {"op":"insert_after","anchor":a,"text":s}
// {"op":"wait_text","text":s,"timeout":ms} {"op":"wait_contains","text":s,"timeout":ms}
// {"op":"wait_closed","timeout":ms} (the first close with an application code, 4000-4999)
// {"op":"close"}.
import * as Y from 'yjs'
import { WebsocketProvider } from 'y-websocket'
import WebSocket from 'ws'
import readline from 'node:readline'

const [base, token] = process.argv.slice(2)

// y-websocket 3 needs a WebSocket implementation in Node; this one adds the Bearer header.
class AuthorizedWebSocket extends WebSocket {
  constructor (url, protocols) {
    super(url, protocols, { headers: { Authorization: `Bearer ${token}` } })
  }
}

const doc = new Y.Doc()
const text = doc.getText('content')
const provider = new WebsocketProvider(base, 'doc', doc, { WebSocketPolyfill: AuthorizedWebSocket })
provider.awareness.setLocalStateField('user', { name: 'node', color: '#0a0' })
const denied = []
const closes = []
provider.on('connection-close', (event) => {
  if (event && event.code >= 4000) {
    closes.push(event.code)
    out({ event: 'closed', code: event.code })
  }
})
const originalWarn = console.warn
console.warn = (...args) => { denied.push(args.join(' ')); originalWarn(...args) }

function out (obj) { process.stdout.write(JSON.stringify(obj) + '\n') }

function until (predicate, timeout = 10000) {
  return new Promise((resolve, reject) => {
    if (predicate()) return resolve()
    const started = Date.now()
    const timer = setInterval(() => {
      if (predicate()) { clearInterval(timer); resolve() } else if (Date.now() - started > timeout) {
        clearInterval(timer); reject(new Error(`timed out; text is ${JSON.stringify(text.toString())}`))
      }
    }, 5)
  })
}

const rl = readline.createInterface({ input: process.stdin })
for await (const line of rl) {
  if (!line.trim()) continue
  const cmd = JSON.parse(line)
  try {
    if (cmd.op === 'wait_synced') {
      await until(() => provider.synced, cmd.timeout)
      out({ ok: true, text: text.toString() })
    } else if (cmd.op === 'get') {
      out({ ok: true, text: text.toString(), length: text.length, denied, closes, clientID: doc.clientID })
    } else if (cmd.op === 'insert') {
      text.insert(cmd.index, cmd.text)
      out({ ok: true, text: text.toString() })
    } else if (cmd.op === 'delete') {
      text.delete(cmd.index, cmd.length)
      out({ ok: true, text: text.toString() })
    } else if (cmd.op === 'wait_closed') {
      await until(() => closes.length > 0, cmd.timeout)
      out({ ok: true, code: closes[0] })
    } else if (cmd.op === 'insert_after') {
      const at = text.toString().indexOf(cmd.anchor)
      if (at < 0) throw new Error(`anchor ${cmd.anchor} not found`)
      text.insert(at + cmd.anchor.length, cmd.text)
      out({ ok: true, text: text.toString() })
    } else if (cmd.op === 'wait_text') {
      await until(() => text.toString() === cmd.text, cmd.timeout)
      out({ ok: true, text: text.toString() })
    } else if (cmd.op === 'wait_contains') {
      await until(() => text.toString().includes(cmd.text), cmd.timeout)
      out({ ok: true, text: text.toString() })
    } else if (cmd.op === 'close') {
      provider.destroy()
      out({ ok: true })
      break
    } else {
      throw new Error(`unknown op ${cmd.op}`)
    }
  } catch (error) {
    out({ ok: false, error: String(error && error.message ? error.message : error) })
  }
}
process.exit(0)
