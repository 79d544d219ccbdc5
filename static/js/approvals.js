// The approval card: a dangerous tool call waits for the user inside the live turn.
// Registered as the turn view's hook for 'approval' events. The card shows the command in
// full (textContent only) and why it was flagged, with once / this session / always / deny.
// A replayed card (after a reload) asks the server whether it still waits before offering
// the buttons; an answered or timed-out one says so instead.

import { get, post } from './api.js';
import { el } from './ui.js';
import { eventHooks } from './turnview.js';

// The card's own stylesheet (same origin, so the page's CSP allows it).
if (!document.querySelector('link[data-approvals-css]')) {
  // Relative to this module, so it comes from the same versioned folder (web/pages.py).
  document.head.append(el('link', { rel: 'stylesheet', href: new URL('../css/approvals.css', import.meta.url).href, 'data-approvals-css': '' }));
}

const CHOICES = [
  ['once', 'Approve once'],
  ['session', 'This session'],
  ['always', 'Always'],
  ['deny', 'Deny'],
];
const SAID = {
  once: 'Approved once.',
  session: 'Approved for the rest of this session.',
  always: 'Approved always (hermes approvals revoke lists and removes it).',
  deny: 'Denied.',
};

function shownInput(ev) {
  const input = ev.input || {};
  if (ev.tool === 'run_bash' && typeof input.command === 'string') return input.command;
  if (typeof input.path === 'string') return input.path;
  return JSON.stringify(input, null, 2);
}

function approvalCard(ev, turnId) {
  const status = el('p', { class: 'approval-status', role: 'status' });
  const buttons = el('div', { class: 'approval-actions' });
  const card = el('section', { class: 'approval-card', 'aria-label': 'Approval needed', 'data-approval-id': String(ev.id || '') },
    el('h3', { class: 'approval-title' }, String(ev.tool || 'tool') + ' needs your approval'),
    el('p', { class: 'approval-reason' }, String(ev.reason || '')),
    el('pre', { class: 'approval-input' }, el('code', {}, shownInput(ev))),
    buttons,
    status,
  );

  const settle = (text) => {
    buttons.replaceChildren();
    status.textContent = text;
    card.classList.add('settled');
  };

  for (const [decision, label] of CHOICES) {
    const button = el('button', { type: 'button', class: 'btn approval-' + decision, 'data-decision': decision }, label);
    button.addEventListener('click', async () => {
      for (const b of buttons.querySelectorAll('button')) b.disabled = true;
      try {
        await post('/api/turns/' + encodeURIComponent(turnId) + '/approvals/' + encodeURIComponent(ev.id), { decision });
        settle(SAID[decision]);
      } catch (err) {
        if (err.status === 404) settle(err.message);
        else {
          status.textContent = err.message;
          for (const b of buttons.querySelectorAll('button')) b.disabled = false;
        }
      }
    });
    buttons.append(button);
  }
  return { card, settle };
}

async function stillWaiting(turnId, id) {
  try {
    const body = await get('/api/turns/' + encodeURIComponent(turnId) + '/approvals');
    return (body.pending || []).some((p) => p.id === id);
  } catch {
    return true; // let the POST say what happened
  }
}

eventHooks.set('approval', (ev, { body, turnId }) => {
  if (!turnId || !ev.id) return;
  const { card, settle } = approvalCard(ev, turnId);
  body.append(card);
  // Replayed after a reload, or left until the server's timeout denied it: check, then keep checking.
  const check = async () => {
    if (card.classList.contains('settled') || !card.isConnected) return;
    if (await stillWaiting(turnId, ev.id)) setTimeout(check, 3000);
    else if (!card.classList.contains('settled')) settle('No longer waiting: it was answered elsewhere, or nobody answered in time (a denial).');
  };
  check();
  const first = card.querySelector('button');
  if (first) first.focus({ preventScroll: true });
});
