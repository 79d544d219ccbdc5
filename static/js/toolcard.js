// Tool calls as collapsible cards. The card's body (input and output) is built only when the
// user opens it, so a session with hundreds of large tool results stays light.

import { el } from './ui.js';

const FOLD_CHARS = 2000;
const data = new WeakMap(); // card -> {name, input, output, isError, durationMs}

function preview(input) {
  if (input === null || input === undefined) return '';
  let s;
  if (typeof input === 'string') s = input;
  else {
    const vals = Object.values(input).filter((v) => typeof v === 'string' || typeof v === 'number');
    s = vals.length ? vals.join(' ') : JSON.stringify(input);
  }
  s = s.replace(/\s+/g, ' ').trim();
  return s.length > 80 ? s.slice(0, 79) + '…' : s;
}

function pretty(input) {
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input, null, 2);
  } catch {
    return String(input);
  }
}

/** A card for one tool call; `output` may come later through setResult. */
export function toolCard({ id, name, input }) {
  const status = el('span', { class: 'tool-status' }, 'running…');
  const summary = el(
    'summary',
    {},
    el('span', { class: 'tool-name' }, name || 'tool'),
    el('span', { class: 'tool-preview' }, preview(input)),
    status,
  );
  const card = el('details', { class: 'tool-card running', dataset: { callId: id || '' } }, summary);
  data.set(card, { name, input, output: null, isError: false, durationMs: null });
  card.addEventListener('toggle', () => {
    if (card.open) build(card);
  });
  return card;
}

/** Attach a tool's result to its card, marking errors. */
export function setResult(card, { output, is_error: isError, duration_ms: durationMs }) {
  const d = data.get(card);
  if (!d) return;
  d.output = output === undefined || output === null ? '' : String(output);
  d.isError = Boolean(isError);
  d.durationMs = durationMs;
  card.classList.remove('running');
  card.classList.toggle('error', d.isError);
  const status = card.querySelector('.tool-status');
  const secs = typeof durationMs === 'number' && durationMs > 0 ? ' · ' + (durationMs / 1000).toFixed(1) + ' s' : '';
  status.textContent = (d.isError ? 'error' : 'done') + secs;
  if (d.isError) status.setAttribute('aria-label', 'Tool failed');
  if (card.open) build(card, true);
}

/** A card for a stored tool message whose call is not on screen (paged out, or imported). */
export function orphanResult(message) {
  const card = toolCard({ id: message.tool_call_id, name: message.tool_name, input: null });
  setResult(card, { output: message.content, is_error: message.is_error, duration_ms: null });
  return card;
}

function build(card, again = false) {
  if (card.dataset.built && !again) return;
  card.dataset.built = '1';
  const d = data.get(card);
  card.querySelector('.tool-body')?.remove();
  const body = el('div', { class: 'tool-body' });
  if (d.input !== null && d.input !== undefined) {
    body.append(el('h4', {}, 'Input'), el('pre', { class: 'tool-input' }, pretty(d.input)));
  }
  if (d.output === null) {
    body.append(el('p', { class: 'tool-wait' }, 'Waiting for the result…'));
  } else {
    body.append(el('h4', {}, d.isError ? 'Error' : 'Result'));
    const pre = el('pre', { class: 'tool-output' + (d.isError ? ' error' : '') });
    if (d.output.length > FOLD_CHARS) {
      pre.textContent = d.output.slice(0, FOLD_CHARS) + '\n…';
      const more = el('button', { type: 'button', class: 'link-btn' }, 'Show all ' + d.output.length.toLocaleString() + ' characters');
      more.addEventListener('click', () => {
        pre.textContent = d.output;
        more.remove();
      }, { once: true });
      body.append(pre, more);
    } else {
      pre.textContent = d.output || '(no output)';
      body.append(pre);
    }
  }
  card.append(body);
}
