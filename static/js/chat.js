// The chat view: opens a session (newest page, or around a bookmarked message), sends turns,
// follows or resumes the running one, queues what the user types meanwhile, and keeps the
// session's running usage total in the header.

import { get, post, enc, qs, ApiError, takeBoot } from './api.js';
import { Transcript, messageShell, rawOf } from './transcript.js';
import { usageText } from './usage.js';

// The streaming machinery (and the approval card, a hook of the turn view) is not needed to
// paint a session: it loads once the page is idle, or with the first turn if that comes sooner.
const turnModules = () => Promise.all([import('./stream.js'), import('./turnview.js'), import('./approvals.js')]);
import { announce, copyText, flash, errorBox, el } from './ui.js';

const PAGE = 100; // older/newer pages
const FIRST_PAGE = 40; // what a session opens with (web/pages.py sends as many with the HTML)
const FIRST_PAINT = 12; // of those, drawn before the first paint: a screenful; the rest follow in slices
const SLICE = 8; // messages rendered per task while the rest of the first page fills in above
const $ = (id) => document.getElementById(id);

export class Chat {
  constructor({ onSessionChanged, onNavigate }) {
    this.onSessionChanged = onSessionChanged; // (session) -> sidebar and URL update
    this.onNavigate = onNavigate;
    this.input = $('composer-input');
    this.stopBtn = $('stop-btn');
    this.queuedEl = $('queued');
    this.session = null;
    this.turn = null; // {stream, view, turnId}
    this.queue = [];
    this.loading = { older: false, newer: false };
    this.hasOlder = false;
    this.hasNewer = false;
    this.openSeq = 0;
    this.boot = takeBoot('chat');
    this.transcript = new Transcript({
      scroller: $('transcript'),
      list: $('messages'),
      jump: $('jump-latest'),
      onNearTop: () => this.loadOlder(),
      onNearBottom: () => this.loadNewer(),
    });
    this.transcript.onJumpLatest = () => {
      if (!this.hasNewer || !this.session) return false;
      this.open(this.session.id);
      return true;
    };
    $('load-older-btn').addEventListener('click', () => this.loadOlder());
    $('composer').addEventListener('submit', (e) => {
      e.preventDefault();
      this.submit();
    });
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.submit();
      } else if (e.key === 'Escape' && this.turn) {
        e.preventDefault();
        this.stop();
      }
    });
    this.stopBtn.addEventListener('click', () => this.stop());
    this.queuedEl.addEventListener('click', () => this._setQueue([]));
    $('messages').addEventListener('click', (e) => this._onClick(e));
  }

  /** Whether messages newer than the window exist (the user paged up far): "jump to latest" stays. */
  get hasNewer() {
    return this._hasNewer;
  }

  set hasNewer(value) {
    this._hasNewer = Boolean(value);
    if (this.transcript) {
      this.transcript.moreBelow = this._hasNewer;
      if (this._hasNewer) this.transcript.jump.hidden = false;
    }
  }

  /** Show an empty new chat; the session is created by the first message. */
  newChat() {
    // The chat being left gets its summary written when the new one is created (server side).
    if (this.session) this.leftSessionId = Number(this.session.id);
    this._leave();
    this.openSeq++; // an open() still loading must not replace the new chat
    this.session = null;
    this.transcript.clear();
    this._setHeader();
    this.hasOlder = this.hasNewer = false;
    $('load-older').hidden = true;
    this.input.focus();
    whenIdle(turnModules);
  }

  /** Open a session; with `messageId`, around that message, scrolled to it and highlighted. */
  async open(sessionId, messageId = null) {
    this._leave();
    const seq = ++this.openSeq;
    this.transcript.clear();
    // The session the HTML came with (web/pages.py) is good for the first open only.
    const boot = this.boot;
    this.boot = null;
    let data;
    try {
      if (messageId) {
        // The API pages by existing message ids: take what follows the message, then the
        // page that ends just before the first of those (it holds the message itself).
        const base = '/api/sessions/' + enc(sessionId);
        const newer = await get(base + qs({ after: messageId, limit: 50 }));
        if (newer.messages.length) {
          const older = await get(base + qs({ before: newer.messages[0].id, limit: 21 }));
          data = { session: newer.session, messages: older.messages.concat(newer.messages), has_more: older.has_more };
          this.hasNewer = Boolean(newer.has_more);
        } else {
          data = await get(base + qs({ limit: FIRST_PAGE }));
          this.hasNewer = false;
        }
      } else {
        data = boot && String(boot.session.id) === String(sessionId) ? boot
          : await get('/api/sessions/' + enc(sessionId) + qs({ limit: FIRST_PAGE }));
        this.hasNewer = false;
      }
    } catch (e) {
      if (seq !== this.openSeq) return;
      if (messageId && e.status === 400) {
        announce('That message is no longer in this session.');
        return this.open(sessionId);
      }
      this.session = null;
      this._setHeader();
      $('messages').append(el('li', { class: 'msg-error' }, errorBox(e.message, e.status === 404 ? null : () => this.open(sessionId, messageId))));
      return;
    }
    if (seq !== this.openSeq) return;
    this.session = data.session;
    this.usage = baseUsage(data.session);
    this.transcript.setCompactions(data.session.compactions);
    this.hasOlder = false; // no paging up until the first page is all in
    $('load-older').hidden = true;
    const split = messageId ? 0 : splitPoint(data.messages, data.messages.length - FIRST_PAINT);
    this.transcript.add(data.messages.slice(split));
    this._setHeader();
    this.onSessionChanged(this.session);
    // The screenful at the bottom is painted first; the older part of the first page is
    // rendered above it a slice per task, so no task holds the page for the whole page.
    if (split > 0) await afterPaint();
    for (let end = split; end > 0;) {
      if (seq !== this.openSeq) return;
      const start = splitPoint(data.messages, end - SLICE);
      this.transcript.add(data.messages.slice(start, end), 'top');
      end = start;
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    if (seq !== this.openSeq) return;
    this.hasOlder = Boolean(data.has_more);
    $('load-older').hidden = !this.hasOlder;
    whenIdle(turnModules);
    if (messageId && !this.transcript.reveal(messageId)) announce('That message is no longer in this session.');
    if (this.hasNewer) return;
    if (data.session.running_turn_id) this._follow(null, String(data.session.running_turn_id));
    else if (rememberedTurn(data.session.id)) this._follow(null, rememberedTurn(data.session.id), { quiet: true });
  }

  async loadOlder() {
    if (!this.session || !this.hasOlder || this.loading.older) return;
    const oldest = this.transcript.oldestId;
    if (!oldest) return;
    this.loading.older = true;
    try {
      const data = await get('/api/sessions/' + enc(this.session.id) + qs({ before: oldest, limit: PAGE }));
      this.transcript.add(data.messages, 'top');
      this.hasOlder = Boolean(data.has_more);
      if (this.transcript.trimmedBottom) this.hasNewer = true;
      $('load-older').hidden = !this.hasOlder;
    } catch (e) {
      announce(e.message);
    } finally {
      this.loading.older = false;
    }
  }

  async loadNewer() {
    if (!this.session || !this.hasNewer || this.loading.newer) return;
    const newest = this.transcript.newestId;
    if (!newest) return;
    this.loading.newer = true;
    try {
      const data = await get('/api/sessions/' + enc(this.session.id) + qs({ after: newest, limit: PAGE }));
      this.transcript.add(data.messages, 'bottom');
      this.hasNewer = Boolean(data.has_more);
      if (this.transcript.trimmedTop) {
        this.hasOlder = true;
        $('load-older').hidden = false;
      }
      if (!this.hasNewer && this.session.running_turn_id && !this.turn) this.open(this.session.id);
    } catch (e) {
      announce(e.message);
    } finally {
      this.loading.newer = false;
    }
  }

  submit() {
    const text = this.input.value;
    if (!text.trim()) return;
    this.input.value = '';
    if (this.turn) {
      this._setQueue(this.queue.concat([text]));
      announce('Message queued; it is sent when the current answer ends.');
      return;
    }
    this.send(text);
  }

  /** Send one message as a new turn (creating the session on the first message). */
  async send(text) {
    this.lastText = text;
    if (this.hasNewer && this.session) await this.open(this.session.id);
    if (!this.session) {
      try {
        const data = await post('/api/sessions', this.leftSessionId ? { previous_session_id: this.leftSessionId } : {});
        this.leftSessionId = null;
        this.session = data.session;
        this.usage = baseUsage(this.session);
        this.onSessionChanged(this.session, { top: true });
        this._setHeader();
      } catch (e) {
        this._failed(e, text);
        return;
      }
    }
    const userRow = messageShell({ id: null, created_at: new Date().toISOString() }, 'user');
    userRow.classList.add('pending');
    userRow.querySelector('.msg-body').classList.add('plain');
    userRow.querySelector('.msg-body').textContent = text;
    this.transcript.stick = true;
    this.transcript.appendLive(userRow);
    this._follow({ text, userRow }, null);
  }

  /** Follow a turn: a new one (`start` has the text) or a running one (`turnId`). */
  async _follow(start, turnId, { quiet = false } = {}) {
    const [{ TurnStream }, { TurnView }] = await turnModules();
    const view = new TurnView({ onRetry: () => this.send(start ? start.text : this.lastText || '') });
    const sessionId = this.session.id;
    const turn = { view, turnId, stream: null };
    const stream = new TurnStream({
      onEvent: (ev) => this._onEvent(turn, ev, start),
      onState: (state) => {
        if (state === 'reconnecting' && turn.shown) announce('Reconnecting to the running answer…');
      },
    });
    turn.stream = stream;
    this.turn = turn;
    this._running(true);
    try {
      if (start) await stream.start(sessionId, start.text);
      else await stream.resume(turnId, 0);
    } catch (e) {
      if (e instanceof ApiError && e.code === 'session_busy' && e.extra.turn_id) {
        // Another tab (or a reload) owns the running turn: follow it, send ours after.
        start.userRow.remove();
        this._setQueue([start.text].concat(this.queue));
        if (this.turn === turn) this.turn = null;
        this._follow(null, String(e.extra.turn_id));
        return;
      }
      if (this.turn !== turn) return;
      if (!start && e instanceof ApiError && e.status === 410) {
        // The server no longer holds the turn's events; its stored messages hold the turn.
        forgetTurn(sessionId);
        this._turnOver(turn);
        if (!quiet) this.open(sessionId);
        return;
      }
      if (quiet && !turn.shown) {
        // A turn this browser remembered has left the server's replay buffer: nothing to show.
        forgetTurn(sessionId);
        this._turnOver(turn);
        return;
      }
      if (!turn.shown && start) {
        start.userRow.remove();
        this._failed(e, start.text);
      } else {
        if (!turn.shown) {
          turn.shown = true;
          this.transcript.appendLive(view.row);
        }
        view.lost(e.message, () => this.open(sessionId));
      }
      this._turnOver(turn);
    }
  }

  _onEvent(turn, ev, start) {
    if (this.turn !== turn && ev.type !== 'skill') return;
    if (ev.type === 'turn_start' && this.session) rememberTurn(this.session.id, ev.turn_id);
    if (ev.type === 'turn_start') {
      if (start) {
        start.userRow.classList.remove('pending');
        if (ev.user_message_id) {
          start.userRow.id = 'm' + ev.user_message_id;
          start.userRow.dataset.id = String(ev.user_message_id);
        }
      } else if (ev.user_message_id) {
        // Resuming: rows after the user's message are this turn's partial saves; redraw them.
        this.transcript.dropAfter(ev.user_message_id);
      }
    }
    if (!turn.shown) {
      turn.shown = true;
      this.transcript.appendLive(turn.view.row);
      announce('Hermes is answering…');
    }
    turn.view.handle(ev);
    if (ev.type === 'usage') this._addUsage(ev);
    if (ev.type === 'done') {
      if (this.session) forgetTurn(this.session.id);
      announce(ev.stop_reason === 'cancelled' ? 'Stopped.' : 'Answer complete.');
      this._turnOver(turn);
      this._refreshSession();
    }
    this.transcript.follow();
  }

  _turnOver(turn) {
    if (this.turn !== turn) return;
    this.turn = null;
    this._running(false);
    if (this.queue.length) {
      const [next, ...rest] = this.queue;
      this._setQueue(rest);
      this.send(next);
    }
  }

  async stop() {
    if (!this.turn || !this.turn.view.turnId && !this.turn.turnId) return;
    this.stopBtn.disabled = true;
    this.stopBtn.textContent = 'Stopping…';
    try {
      const { cancelTurn } = await import('./stream.js');
      await cancelTurn(this.turn.view.turnId || this.turn.turnId);
    } catch (e) {
      announce(e.message);
      this.stopBtn.disabled = false;
      this.stopBtn.textContent = 'Stop';
    }
  }

  /** Focus the composer (keyboard shortcut target). */
  focus() {
    this.input.focus();
  }

  copyLastCode() {
    const blocks = $('messages').querySelectorAll('pre code');
    if (!blocks.length) return announce('No code block to copy.');
    copyText(blocks[blocks.length - 1].textContent).then(() => announce('Code copied.'));
  }

  _failed(e, text) {
    const row = el('li', { class: 'msg-error' });
    row.append(errorBox(e.message, () => {
      row.remove();
      this.send(text);
    }));
    this.transcript.appendLive(row);
  }

  _leave() {
    if (this.turn) this.turn.stream.close();
    this.turn = null;
    this._running(false);
  }

  _running(on) {
    this.stopBtn.hidden = !on;
    this.stopBtn.disabled = false;
    this.stopBtn.textContent = 'Stop';
    $('transcript').setAttribute('aria-busy', on ? 'true' : 'false');
  }

  _setQueue(items) {
    this.queue = items;
    this.queuedEl.hidden = !items.length;
    this.queuedEl.textContent = items.length ? items.length + ' waiting · clear' : '';
    this.queuedEl.setAttribute('aria-label', items.length + ' queued messages; activate to clear');
  }

  _addUsage(ev) {
    if (!this.usage) this.usage = baseUsage(null);
    for (const k of ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens']) this.usage[k] += Number(ev[k] || 0);
    if (ev.cost_usd === null || ev.cost_usd === undefined) this.usage.known = false;
    else this.usage.cost_usd += Number(ev.cost_usd);
    this._setHeader();
  }

  async _refreshSession() {
    if (!this.session) return;
    try {
      const data = await get('/api/sessions/' + enc(this.session.id) + qs({ limit: 1 }));
      this.session = data.session;
      if (data.session.usage) this.usage = baseUsage(data.session);
      this._setHeader();
      this.onSessionChanged(this.session, { top: true });
    } catch {
      // the header keeps its old title; nothing is lost
    }
  }

  _setHeader() {
    $('chat-title').textContent = this.session ? this.session.title || 'Untitled chat' : 'New chat';
    const total = this.session && this.usage ? 'Session: ' + usageText(this.usage) : '';
    $('chat-usage').textContent = total;
    $('session-cost').textContent = this.usage && this.session ? costOnly(this.usage) : '';
  }

  _onClick(e) {
    const btn = e.target.closest('button[data-action]');
    if (!btn) return;
    if (btn.dataset.action === 'copy-code') {
      const code = btn.closest('pre').querySelector('code') || btn.closest('pre');
      const text = code === btn.closest('pre') ? code.textContent.replace(/^Copy/, '') : code.textContent;
      copyText(text).then((ok) => flash(btn, ok ? 'Copied' : 'Copy failed'));
    } else if (btn.dataset.action === 'copy-answer') {
      copyText(rawOf(btn.closest('.msg'))).then((ok) => flash(btn, ok ? 'Copied' : 'Copy failed'));
    }
  }
}

// The turn this browser is following, per session, in localStorage: a reload or a second tab
// can pick it up even when the session JSON does not (yet) name its running turn.
const TURN_KEY = 'hermes.turn.';
const TURN_MEMORY_MS = 15 * 60 * 1000;

function rememberTurn(sessionId, turnId) {
  if (!turnId) return;
  try {
    localStorage.setItem(TURN_KEY + sessionId, JSON.stringify({ turnId: String(turnId), at: Date.now() }));
  } catch {
    // storage full or disabled: the server's running_turn_id still works
  }
}

function forgetTurn(sessionId) {
  try {
    localStorage.removeItem(TURN_KEY + sessionId);
  } catch {
    // ignore
  }
}

function rememberedTurn(sessionId) {
  try {
    const item = JSON.parse(localStorage.getItem(TURN_KEY + sessionId) || 'null');
    if (item && Date.now() - item.at < TURN_MEMORY_MS) return item.turnId;
    if (item) forgetTurn(sessionId);
  } catch {
    // ignore
  }
  return null;
}

/**
 * Where to cut a page of messages near `at` so a tool result is never drawn apart from the
 * call it answers: the cut moves back to the nearest message that is not a tool result.
 */
function splitPoint(messages, at) {
  let i = Math.max(0, at);
  while (i > 0 && messages[i] && messages[i].role === 'tool') i--;
  return i;
}

/** Run `fn` when the browser has nothing else to do (soon, where requestIdleCallback is missing). */
function whenIdle(fn) {
  const run = () => fn().catch(() => {}); // a failure shows when the turn itself needs them
  if (window.requestIdleCallback) requestIdleCallback(run, { timeout: 2000 });
  else setTimeout(run, 200);
}

/** Resolves once the browser has painted what is in the DOM now. */
function afterPaint() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

function baseUsage(session) {
  const u = (session && session.usage) || {};
  return {
    input_tokens: Number(u.input_tokens || 0),
    output_tokens: Number(u.output_tokens || 0),
    cache_read_tokens: Number(u.cache_read_tokens || 0),
    cache_write_tokens: Number(u.cache_write_tokens || 0),
    cost_usd: Number(u.cost_usd || 0),
    known: !(session && session.usage && session.usage.cost_usd === null),
  };
}

function costOnly(u) {
  if (u.known === false) return '';
  return u.cost_usd ? '$' + (u.cost_usd < 0.01 ? u.cost_usd.toFixed(4) : u.cost_usd.toFixed(2)) : '';
}
