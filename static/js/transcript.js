// The conversation on screen: stored messages rendered once each, a window of at most
// MAX_IN_DOM of them (older and newer ones page in from the API as the user scrolls), tool
// cards attached to their calls, compaction markers, and autoscroll that stops when the
// user scrolls up.

import { el, fullTime, shortTime } from './ui.js';
import { renderMarkdown, addCodeCopyButtons } from './markdown.js';
import { toolCard, setResult, orphanResult } from './toolcard.js';

const MAX_IN_DOM = 240;
const NEAR_BOTTOM_PX = 48;

const ROLE_LABEL = { user: 'You', assistant: 'Hermes', tool: 'Tool', summary: 'Summary' };
const rawText = new WeakMap(); // message element -> its markdown, for "Copy"

export class Transcript {
  constructor({ scroller, list, jump, onNearTop, onNearBottom }) {
    this.scroller = scroller;
    this.list = list;
    this.jump = jump;
    this.onNearTop = onNearTop;
    this.onNearBottom = onNearBottom;
    this.stick = true;
    this.compactions = new Map(); // through_message_id -> compaction
    this.scrollQueued = false;
    scroller.addEventListener('scroll', () => this._onScroll(), { passive: true });
    jump.addEventListener('click', () => this.jumpToLatest());
  }

  clear() {
    this.list.replaceChildren();
    this.stick = true;
    this.jump.hidden = true;
  }

  setCompactions(list) {
    this.compactions = new Map((list || []).map((c) => [String(c.through_message_id), c]));
  }

  /** Ids of the first and last stored messages in the DOM. */
  get oldestId() {
    const first = this.list.querySelector(':scope > [data-id]');
    return first ? first.dataset.id : null;
  }

  get newestId() {
    const all = this.list.querySelectorAll(':scope > [data-id]');
    return all.length ? all[all.length - 1].dataset.id : null;
  }

  /** Render stored messages (oldest first) at the bottom or the top of the window. */
  add(messages, where = 'bottom') {
    const frag = document.createDocumentFragment();
    const pendingCalls = new Map();
    for (const m of messages) {
      const node = this._render(m, pendingCalls);
      if (node) frag.append(node);
      const marker = this.compactions.get(String(m.id));
      if (marker) frag.append(compactionMarker(marker));
    }
    if (where === 'top') {
      const before = this.scroller.scrollHeight;
      const top = this.scroller.scrollTop;
      this.list.prepend(frag);
      this.scroller.scrollTop = top + (this.scroller.scrollHeight - before);
      this._trim('bottom');
    } else {
      this.list.append(frag);
      this._trim('top');
      this.follow();
    }
  }

  /** Remove messages after `messageId` (a running turn's partial rows, redrawn from its events). */
  dropAfter(messageId) {
    for (const node of [...this.list.children]) {
      if (node.dataset.id && Number(node.dataset.id) > Number(messageId)) node.remove();
    }
  }

  /** Append a live element (the turn being streamed). */
  appendLive(node) {
    this.list.append(node);
    this._trim('top');
    this.follow();
  }

  /** Scroll to the bottom when the user has not scrolled away; at most once per frame. */
  follow() {
    if (!this.stick) {
      this.jump.hidden = false;
      return;
    }
    if (this.scrollQueued) return;
    this.scrollQueued = true;
    requestAnimationFrame(() => {
      this.scrollQueued = false;
      if (this.stick) this.scroller.scrollTop = this.scroller.scrollHeight;
    });
  }

  jumpToLatest() {
    this.stick = !this.moreBelow;
    this.jump.hidden = true;
    if (this.onJumpLatest && this.onJumpLatest()) return;
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  /** Scroll a message into view and highlight it; false when it is not in the DOM. */
  reveal(messageId) {
    const node = document.getElementById('m' + messageId);
    if (!node) return false;
    this.stick = false;
    node.scrollIntoView({ block: 'center' });
    node.classList.add('highlight');
    node.setAttribute('tabindex', '-1');
    node.focus({ preventScroll: true });
    setTimeout(() => node.classList.remove('highlight'), 4000);
    return true;
  }

  _onScroll() {
    const s = this.scroller;
    const fromBottom = s.scrollHeight - s.scrollTop - s.clientHeight;
    this.stick = fromBottom < NEAR_BOTTOM_PX && !this.moreBelow;
    // Away from the end (by more than a screen, or with newer messages paged out): offer the way back.
    this.jump.hidden = !(this.moreBelow || fromBottom > s.clientHeight);
    if (s.scrollTop < 400 && this.onNearTop) this.onNearTop();
    if (fromBottom < 400 && this.onNearBottom) this.onNearBottom();
  }

  /** Keep the DOM small: drop stored messages from the far end of the window. */
  _trim(end) {
    const rows = this.list.querySelectorAll(':scope > [data-id]');
    let extra = rows.length - MAX_IN_DOM;
    if (extra <= 0) return;
    const before = this.scroller.scrollHeight;
    const ordered = end === 'top' ? [...rows] : [...rows].reverse();
    for (const node of ordered) {
      if (extra-- <= 0) break;
      // Markers and orphans between removed rows go with them.
      const sib = end === 'top' ? node.nextElementSibling : null;
      node.remove();
      if (sib && !sib.dataset.id && !sib.classList.contains('live')) sib.remove();
    }
    if (end === 'top') {
      this.scroller.scrollTop -= before - this.scroller.scrollHeight;
      this.trimmedTop = true;
    } else {
      this.trimmedBottom = true;
    }
  }

  _render(m, pendingCalls) {
    if (m.role === 'tool') {
      const card = document.querySelector('.tool-card[data-call-id="' + cssEscape(m.tool_call_id || '') + '"]')
        || pendingCalls.get(m.tool_call_id);
      if (card) {
        setResult(card, { output: m.content, is_error: m.is_error, duration_ms: null });
        return null;
      }
      const row = messageShell(m);
      row.querySelector('.msg-body').append(orphanResult(m));
      return row;
    }
    const row = messageShell(m);
    const body = row.querySelector('.msg-body');
    if (m.role === 'assistant') {
      if (m.content) {
        body.classList.add('md');
        body.append(renderMarkdown(m.content));
        addCodeCopyButtons(body);
        rawText.set(row, m.content);
        row.querySelector('.msg-actions').append(copyAnswerButton());
      }
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
      if (calls.length) {
        const tools = el('div', { class: 'tools' });
        for (const c of calls) {
          const card = toolCard({ id: c.id, name: c.name, input: c.input ?? c.arguments });
          pendingCalls.set(c.id, card);
          tools.append(card);
        }
        body.append(tools);
      }
      if (!m.content && !calls.length) row.classList.add('empty');
    } else {
      body.classList.add('plain');
      body.textContent = m.content || '';
    }
    return row;
  }
}

/** The frame of one message: role, hover timestamp, actions, body. */
export function messageShell(m, role = m.role) {
  const row = el('li', {
    class: 'msg msg-' + (ROLE_LABEL[role] ? role : 'other'),
    id: m.id ? 'm' + m.id : null,
    dataset: m.id ? { id: String(m.id) } : {},
  });
  const time = m.created_at
    ? el('time', { datetime: m.created_at, title: fullTime(m.created_at) }, shortTime(m.created_at))
    : el('time', {});
  const permalink = m.id ? el('a', { class: 'permalink', href: '#m' + m.id, 'aria-label': 'Link to this message' }, '#') : null;
  row.append(
    el('div', { class: 'msg-meta' }, el('span', { class: 'role' }, ROLE_LABEL[role] || role), time, permalink,
      el('span', { class: 'msg-actions' })),
    el('div', { class: 'msg-body' }),
  );
  return row;
}

export function copyAnswerButton() {
  return el('button', { type: 'button', class: 'copy-answer', dataset: { action: 'copy-answer' }, 'aria-label': 'Copy answer' }, 'Copy');
}

export function setRaw(row, text) {
  rawText.set(row, text);
}

export function rawOf(row) {
  return rawText.get(row) || '';
}

function compactionMarker(c) {
  return el('li', { class: 'compaction-marker', role: 'note', title: fullTime(c.created_at) }, 'earlier messages summarized');
}

function cssEscape(s) {
  return window.CSS && CSS.escape ? CSS.escape(s) : String(s).replace(/["\\]/g, '\\$&');
}
