// Collab's document editor: a CodeMirror 6 markdown editor bound to the task's Yjs document
// (Y.Text "content") over the standard y-websocket protocol, with remote cursors, a presence
// list, a sanitised preview rendered by the server, and automatic reconnect and resync.
//
// Built into static/vendor/collab-editor.js by `make assets` (assets/vendor-editor.sh); the
// page mounts every element carrying `data-collab-editor` (templates/tasks/_document.html).

import * as Y from 'yjs'
import { WebsocketProvider, messageAuth } from 'y-websocket'
import { readAuthMessage } from 'y-protocols/auth'
import { yCollab, yUndoManagerKeymap } from 'y-codemirror.next'
import { EditorState, Compartment } from '@codemirror/state'
import {
  EditorView, keymap, drawSelection, highlightActiveLine, placeholder, dropCursor,
  highlightSpecialChars, rectangularSelection
} from '@codemirror/view'
import { defaultKeymap, indentWithTab } from '@codemirror/commands'
import { markdownLanguage, insertNewlineContinueMarkup, deleteMarkupBackward } from '@codemirror/lang-markdown'
import { LanguageSupport, HighlightStyle, syntaxHighlighting, defaultHighlightStyle, indentOnInput, bracketMatching } from '@codemirror/language'
import { tags } from '@lezer/highlight'
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search'

const PREVIEW_DEBOUNCE_MS = 300
const RESYNC_INTERVAL_MS = 15000

const STATUS_TEXT = {
  connecting: 'Connecting…',
  connected: 'Syncing…',
  synced: 'Live',
  disconnected: 'Offline, reconnecting…',
  closed: 'Disconnected'
}

function csrfToken () {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/)
  if (match) return decodeURIComponent(match[1])
  const input = document.querySelector('input[name=csrfmiddlewaretoken]')
  return input ? input.value : ''
}

function lighten (hex, alpha) {
  // '#rrggbb' -> '#rrggbbaa' (a translucent selection colour for remote selections)
  return /^#[0-9a-fA-F]{6}$/.test(hex) ? hex + alpha : hex
}

function wsBase (path) {
  const url = new URL(path, window.location.href)
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
  const full = url.toString()
  const cut = full.lastIndexOf('/')
  return { server: full.slice(0, cut), room: full.slice(cut + 1) }
}

const editorTheme = EditorView.theme({
  '&': { fontSize: '15px', height: '100%' },
  '&.cm-focused': { outline: 'none' },
  '.cm-scroller': {
    fontFamily: 'system-ui, -apple-system, "Segoe UI", sans-serif',
    lineHeight: '1.65'
  },
  '.cm-content': { padding: '14px 0', caretColor: 'var(--fg, #1d2330)' },
  '.cm-line': { padding: '0 18px' },
  '.cm-activeLine': { backgroundColor: 'rgba(47, 111, 222, 0.05)' },
  '.cm-ySelectionInfo': {
    fontFamily: 'system-ui, sans-serif',
    fontWeight: '600',
    padding: '1px 4px',
    borderRadius: '3px 3px 3px 0',
    opacity: '1',
    top: '-1.35em'
  },
  '&.cm-editor[contenteditable=false] .cm-cursor, &.cm-readonly .cm-cursor': { display: 'none' }
})

// Markdown source that reads like the document it makes: sized headings, real emphasis,
// monospace only for code.
const markdownStyle = HighlightStyle.define([
  { tag: tags.heading1, fontSize: '1.45em', fontWeight: '700' },
  { tag: tags.heading2, fontSize: '1.25em', fontWeight: '700' },
  { tag: tags.heading3, fontSize: '1.1em', fontWeight: '700' },
  { tag: [tags.heading4, tags.heading5, tags.heading6], fontWeight: '700' },
  { tag: tags.strong, fontWeight: '700' },
  { tag: tags.emphasis, fontStyle: 'italic' },
  { tag: tags.strikethrough, textDecoration: 'line-through' },
  { tag: tags.link, color: '#2f6fde' },
  { tag: tags.url, color: '#5a6b8c' },
  { tag: tags.monospace, fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', fontSize: '0.92em', color: '#9a3b1a' },
  { tag: tags.quote, color: '#4b5563', fontStyle: 'italic' },
  { tag: [tags.processingInstruction, tags.meta, tags.contentSeparator], color: '#9aa3b2' },
  { tag: tags.list, color: '#1d2330' }
])

class DocumentEditor {
  constructor (root) {
    this.root = root
    const data = root.dataset
    this.readOnly = data.readonly === 'true'
    this.previewUrl = data.previewUrl
    this.statusEl = root.querySelector('[data-role=status]')
    this.presenceEl = root.querySelector('[data-role=presence]')
    this.previewEl = root.querySelector('[data-role=preview]')
    this.editorEl = root.querySelector('[data-role=editor]')
    this.modeButtons = root.querySelectorAll('[data-mode]')
    this.previewTimer = null
    this.previewSeq = 0
    this.lastPreviewed = null

    this.ydoc = new Y.Doc()
    this.ytext = this.ydoc.getText('content')
    const { server, room } = wsBase(data.wsPath)
    this.provider = new WebsocketProvider(server, room, this.ydoc, {
      disableBc: true, // the server is the single meeting point, even between tabs
      resyncInterval: RESYNC_INTERVAL_MS,
      maxBackoffTime: 2500
    })
    this.awareness = this.provider.awareness
    // The server answers an edit it refuses (e.g. the person became a viewer) with the auth
    // message "permission denied": switch to read-only and say so.
    this.provider.messageHandlers[messageAuth] = (_encoder, decoder) => {
      readAuthMessage(decoder, this.ydoc, (_doc, reason) => this.onPermissionDenied(reason))
    }
    this.awareness.setLocalStateField('user', {
      name: data.userName,
      color: data.userColor,
      colorLight: lighten(data.userColor, '33'),
      kind: 'person',
      role: this.readOnly ? 'viewer' : 'editor'
    })

    this.undoManager = new Y.UndoManager(this.ytext)
    this.editable = new Compartment()
    // Until the first sync the editor is empty and read-only: typing into a document that has
    // not arrived yet would put the words before its content.
    this.loaded = false
    this.editorEl.textContent = ''
    this.view = new EditorView({
      parent: this.editorEl,
      state: EditorState.create({
        doc: this.ytext.toString(),
        extensions: [
          highlightSpecialChars(),
          drawSelection(),
          dropCursor(),
          rectangularSelection(),
          indentOnInput(),
          bracketMatching(),
          highlightActiveLine(),
          highlightSelectionMatches(),
          EditorView.lineWrapping,
          // markdown without the embedded HTML/JS/CSS grammars (keeps the bundle small)
          new LanguageSupport(markdownLanguage),
          syntaxHighlighting(markdownStyle),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          keymap.of([
            { key: 'Enter', run: insertNewlineContinueMarkup },
            { key: 'Backspace', run: deleteMarkupBackward },
            ...yUndoManagerKeymap, ...defaultKeymap, ...searchKeymap, indentWithTab]),
          EditorView.contentAttributes.of({ 'aria-label': 'Task document', 'data-testid': 'editor-content' }),
          this.editable.of(this.readOnlyExtensions()),
          editorTheme,
          yCollab(this.ytext, this.awareness, { undoManager: this.undoManager })
        ]
      })
    })

    this.provider.on('status', ({ status }) => this.setStatus(status))
    this.provider.on('sync', (synced) => {
      if (!synced) return
      this.onFirstSync()
      this.setStatus('synced')
    })
    this.provider.on('closed', ({ reason }) => this.setStatus('closed', reason))
    this.awareness.on('change', () => this.renderPresence())
    // An agent joined or left the task: the agents pane's live update replaces the list.
    document.addEventListener('htmx:oobAfterSwap', () => {
      const script = document.getElementById('document-agents')
      if ((script ? script.textContent : '') !== this._agentsText) {
        this._agents = undefined
        this.renderPresence()
      }
    })
    // When the browser knows the network is gone, go offline at once (edits stay local) and
    // reconnect as soon as it is back, without waiting for the backoff or the 30 s timeout.
    window.addEventListener('offline', () => this.provider.disconnect())
    window.addEventListener('online', () => this.provider.connect())
    this.ytext.observe(() => this.schedulePreview())
    for (const button of this.modeButtons) {
      button.addEventListener('click', () => this.setMode(button.dataset.mode))
    }
    this.setMode(this.initialMode())
    this.setStatus('connecting')
    this.renderPresence()
    root.collabEditor = this
    root.dataset.ready = 'true'
  }

  onPermissionDenied (reason) {
    if (!this.readOnly) {
      this.readOnly = true
      this.root.dataset.readonly = 'true'
      this.view.dispatch({ effects: this.editable.reconfigure(this.readOnlyExtensions()) })
    }
    let note = this.root.querySelector('[data-role=denied]')
    if (!note) {
      note = document.createElement('p')
      note.className = 'doc-readonly-note'
      note.dataset.role = 'denied'
      note.setAttribute('role', 'alert')
      this.root.querySelector('.doc-body').before(note)
    }
    note.textContent = 'The server refused your change (' + reason + '). ' +
      'Reload the page to see the saved document.'
  }

  // The person's role changed with the page open (a viewer promoted to editor, an editor
  // demoted): the page's chat socket says so (static/collab/task_page.js calls this).
  setReadOnly (readOnly) {
    readOnly = Boolean(readOnly)
    if (readOnly !== this.readOnly) {
      this.readOnly = readOnly
      this.root.dataset.readonly = String(readOnly)
      this.view.dispatch({ effects: this.editable.reconfigure(this.readOnlyExtensions()) })
      const user = this.awareness.getLocalState()?.user
      if (user) this.awareness.setLocalStateField('user', { ...user, role: readOnly ? 'viewer' : 'editor' })
    }
    const write = this.root.querySelector('[data-mode=write]')
    if (write) write.textContent = readOnly ? 'Source' : 'Write'
    if (!readOnly) {
      const denied = this.root.querySelector('[data-role=denied]')
      if (denied) denied.remove()
      if (this.root.dataset.mode === 'preview') this.setMode('write')
    }
  }

  readOnlyExtensions () {
    if (!this.loaded) {
      return [EditorState.readOnly.of(true), EditorView.editable.of(false), placeholder('Loading the document…')]
    }
    const hint = placeholder(this.readOnly ? 'This document is empty.' : 'Write the task document here (markdown)…')
    if (!this.readOnly) return [hint]
    return [EditorState.readOnly.of(true), EditorView.editable.of(false), hint]
  }

  onFirstSync () {
    if (this.loaded) return
    this.loaded = true
    this.view.dispatch({ effects: this.editable.reconfigure(this.readOnlyExtensions()) })
  }

  setStatus (status, reason) {
    if (status === 'connected' && this.provider.synced) status = 'synced'
    // Reconnect attempts after a drop stay "offline" until the socket is back.
    if (status === 'synced') this.wasSynced = true
    if (status === 'connecting' && this.wasSynced) status = 'disconnected'
    this.root.dataset.status = status
    if (!this.statusEl) return
    let text = STATUS_TEXT[status] || status
    if (status === 'closed' && reason) text += ': ' + reason
    this.statusEl.textContent = text
    this.statusEl.className = 'doc-status status-' + status
  }

  renderPresence () {
    if (!this.presenceEl) return
    const people = new Map()
    const me = this.ydoc.clientID
    for (const [clientId, state] of this.awareness.getStates()) {
      const user = state && state.user
      if (!user || typeof user.name !== 'string') continue
      const kind = user.kind === 'agent' ? 'agent' : 'person'
      const key = kind + ':' + user.name
      const entry = people.get(key) || { name: user.name, color: user.color, kind, me: false, count: 0 }
      entry.count += 1
      entry.me = entry.me || clientId === me
      people.set(key, entry)
    }
    // Agents on the task are listed even while they are not in the document.
    for (const agent of this.agentsOnTask()) {
      const key = 'agent:' + agent.name
      if (!people.has(key)) {
        people.set(key, { name: agent.name, color: agent.color, kind: 'agent', me: false, count: 0, idle: true })
      }
    }
    const items = [...people.values()].sort((a, b) =>
      (b.me - a.me) || b.kind.localeCompare(a.kind) || a.name.localeCompare(b.name)) // you, people, agents
    this.presenceEl.replaceChildren(...items.map((p) => {
      const li = document.createElement('li')
      li.className = 'presence-item kind-' + p.kind + (p.me ? ' is-me' : '') + (p.idle ? ' is-idle' : '')
      li.dataset.name = p.name
      li.title = p.name + (p.kind === 'agent' ? (p.idle ? ' (agent on this task, not in the document now)' : ' (agent)') : '') + (p.me ? ' (you)' : '')
      const dot = document.createElement('span')
      dot.className = 'presence-dot'
      if (typeof p.color === 'string' && /^#[0-9a-fA-F]{3,8}$/.test(p.color)) dot.style.background = p.color
      dot.textContent = p.kind === 'agent' ? '⚙' : (p.name[0] || '?').toUpperCase()
      const label = document.createElement('span')
      label.className = 'presence-name'
      label.textContent = p.me ? p.name + ' (you)' : p.name
      li.append(dot, label)
      return li
    }))
  }

  agentsOnTask () {
    if (this._agents === undefined) {
      const script = document.getElementById('document-agents')
      this._agentsText = script ? script.textContent : ''
      try {
        const parsed = script ? JSON.parse(script.textContent) : []
        this._agents = Array.isArray(parsed) ? parsed.filter((a) => a && typeof a.name === 'string') : []
      } catch (e) {
        this._agents = []
      }
    }
    return this._agents
  }

  initialMode () {
    let saved = null
    try { saved = window.localStorage.getItem('collab.editor.mode') } catch (e) {}
    if (saved === 'write' || saved === 'split' || saved === 'preview') return saved
    return this.root.dataset.defaultMode || 'write'
  }

  setMode (mode) {
    this.root.dataset.mode = mode
    for (const button of this.modeButtons) {
      button.setAttribute('aria-pressed', String(button.dataset.mode === mode))
    }
    try { window.localStorage.setItem('collab.editor.mode', mode) } catch (e) {}
    if (mode !== 'write') this.schedulePreview(0)
    if (mode !== 'preview') this.view.requestMeasure()
  }

  schedulePreview (delay = PREVIEW_DEBOUNCE_MS) {
    if (!this.previewEl || this.root.dataset.mode === 'write') return
    clearTimeout(this.previewTimer)
    this.previewTimer = setTimeout(() => this.refreshPreview(), delay)
  }

  async refreshPreview () {
    const text = this.ytext.toString()
    if (text === this.lastPreviewed) return
    const seq = ++this.previewSeq
    const body = new URLSearchParams({ text })
    let response
    try {
      response = await fetch(this.previewUrl, {
        method: 'POST',
        body,
        credentials: 'same-origin',
        headers: { 'X-CSRFToken': csrfToken(), 'HX-Request': 'true' }
      })
    } catch (e) {
      return // offline: the next change or reconnect retries
    }
    if (!response.ok || seq !== this.previewSeq) return
    // The server renders markdown with raw HTML disabled and sanitises the result with nh3
    // (collab/lib/markdown.py), so the fragment is safe to insert.
    this.previewEl.innerHTML = await response.text()
    this.previewEl.dataset.renderedLength = String(text.length)
    this.lastPreviewed = text
  }
}

function mountAll () {
  for (const root of document.querySelectorAll('[data-collab-editor]')) {
    if (!root.collabEditor) new DocumentEditor(root) // eslint-disable-line no-new
  }
}

if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', mountAll)
} else {
  mountAll()
}

export { DocumentEditor, mountAll, Y }
