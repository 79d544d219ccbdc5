// One assistant turn drawn live from its stream events: text segments streamed as markdown,
// tool cards in the order the tools ran, skill badges, the usage line and any error.
// Event types it does not know go to `eventHooks` (e.g. approvals.js registers 'approval');
// without a hook they are ignored.

import { el, errorBox } from './ui.js';
import { usageText } from './usage.js';
import { StreamingMarkdown } from './markdown.js';
import { toolCard, setResult } from './toolcard.js';
import { messageShell, copyAnswerButton, setRaw } from './transcript.js';

/** type -> function(event, {row, body, turnId}) for event kinds owned by other modules. */
export const eventHooks = new Map();

const STOP_NOTES = {
  cancelled: 'Stopped.',
  interrupted: 'Interrupted: the server restarted during this turn.',
  max_iterations: 'Stopped after the most tool rounds allowed for one turn.',
  max_tokens: 'The answer hit the output length limit.',
  refusal: 'The model declined to answer.',
  budget: 'Stopped: the budget for this turn ran out.',
  error: null,
};

const SKILL_WORDS = { used: 'used', created: 'learned', refined: 'refined' };

export class TurnView {
  constructor({ onRetry }) {
    this.onRetry = onRetry;
    this.row = messageShell({ id: null, created_at: new Date().toISOString() }, 'assistant');
    this.row.classList.add('live');
    this.body = this.row.querySelector('.msg-body');
    this.body.classList.add('md');
    this.row.setAttribute('aria-busy', 'true');
    this.segment = null;
    this.cards = new Map();
    this.text = '';
    this.usage = null;
    this.turnId = null;
    this.done = false;
  }

  /** Handle one event; returns the event's kind for the caller's bookkeeping. */
  handle(ev) {
    if (ev.turn_id) this.turnId = String(ev.turn_id);
    switch (ev.type) {
      case 'turn_start':
        break;
      case 'text':
        if (!this.segment) {
          const box = el('div', { class: 'segment' });
          this.body.append(box);
          this.segment = new StreamingMarkdown(box);
        }
        this.segment.append(ev.delta || '');
        this.text += ev.delta || '';
        break;
      case 'tool_call': {
        this._endSegment();
        const card = toolCard({ id: ev.id, name: ev.name, input: ev.input });
        this.cards.set(ev.id, card);
        this._tools().append(card);
        break;
      }
      case 'tool_result': {
        let card = this.cards.get(ev.id);
        if (!card) {
          card = toolCard({ id: ev.id, name: ev.name, input: null });
          this.cards.set(ev.id, card);
          this._tools().append(card);
        }
        setResult(card, ev);
        break;
      }
      case 'skill':
        this._badge(ev);
        break;
      case 'usage':
        this._addUsage(ev);
        break;
      case 'error':
        this._endSegment();
        this.body.append(errorBox(ev.message || 'The turn failed.', this.onRetry));
        break;
      case 'done':
        this._finish(ev);
        break;
      default: {
        const hook = eventHooks.get(ev.type);
        if (hook) hook(ev, { row: this.row, body: this.body, turnId: this.turnId });
      }
    }
  }

  /** The stream could not be followed any further: say so, offer to try again. */
  lost(message, onRetry) {
    this._endSegment();
    this.body.append(errorBox(message, onRetry));
  }

  _tools() {
    const last = this.body.lastElementChild;
    if (last && last.classList.contains('tools')) return last;
    const tools = el('div', { class: 'tools' });
    this.body.append(tools);
    return tools;
  }

  _endSegment() {
    if (this.segment) this.segment.finish();
    this.segment = null;
  }

  _badge(ev) {
    let badges = this.row.querySelector('.badges');
    if (!badges) {
      badges = el('div', { class: 'badges', 'aria-label': 'Skills' });
      this.row.append(badges);
    }
    const word = SKILL_WORDS[ev.action] || String(ev.action || 'skill');
    const version = ev.action === 'refined' && ev.version ? ' v' + ev.version : '';
    const link = el('a', { class: 'badge badge-' + (SKILL_WORDS[ev.action] ? ev.action : 'other'), href: '/skills/' + encodeURIComponent(ev.name || '') },
      word + ' ' + (ev.name || '') + version);
    badges.append(link);
  }

  _addUsage(ev) {
    const u = this.usage || { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, known: true };
    for (const k of ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens']) u[k] += Number(ev[k] || 0);
    if (ev.cost_usd === null || ev.cost_usd === undefined) u.known = false;
    else u.cost_usd += Number(ev.cost_usd);
    this.usage = u;
    let line = this.row.querySelector('.usage-line');
    if (!line) {
      line = el('div', { class: 'usage-line' });
      this.row.append(line);
    }
    line.textContent = usageText(u);
  }

  _finish(ev) {
    this._endSegment();
    this.done = true;
    this.row.removeAttribute('aria-busy');
    this.row.classList.remove('live');
    const id = ev.assistant_message_id;
    if (id) {
      this.row.id = 'm' + id;
      this.row.dataset.id = String(id);
      const link = el('a', { class: 'permalink', href: '#m' + id, 'aria-label': 'Link to this message' }, '#');
      this.row.querySelector('.msg-meta time').after(link);
    }
    if (this.text.trim()) {
      setRaw(this.row, this.text);
      this.row.querySelector('.msg-actions').append(copyAnswerButton());
    }
    const note = STOP_NOTES[ev.stop_reason];
    if (note) this.body.append(el('p', { class: 'stop-note stop-' + ev.stop_reason }, note));
    if (ev.stop_reason === 'error' && !this.body.querySelector('.inline-error')) {
      this.body.append(errorBox('The turn failed.', this.onRetry));
    }
  }
}
