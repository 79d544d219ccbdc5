// Small DOM helpers shared by every area. Text always goes in through textContent.

/**
 * Build an element: el('button', {class: 'x', type: 'button', dataset: {id: 1}}, 'label', child).
 * Attribute values are set with setAttribute and children as text nodes, so nothing is parsed as HTML.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/** Say something to screen readers through the page's polite live region. */
export function announce(text) {
  const region = document.getElementById('live-status');
  if (region) region.textContent = text;
}

/** A modal yes/no question; resolves true when the user confirms. */
export function confirmDialog(text, okLabel = 'Delete') {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = okLabel;
  dialog.returnValue = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.showModal();
  });
}

/** Copy text; falls back to a hidden textarea where the async clipboard is unavailable (plain http). */
export async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the old way
  }
  const area = el('textarea', { class: 'visually-hidden', 'aria-hidden': 'true' });
  area.value = text;
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/** Show a button's success briefly ("Copied"). */
export function flash(button, text) {
  const old = button.textContent;
  button.textContent = text;
  setTimeout(() => { button.textContent = old; }, 1200);
}

/** Parse the API's timestamps (ISO 8601; a missing zone means UTC). */
export function parseTime(value) {
  if (!value) return null;
  let s = String(value);
  if (!/[zZ]|[+-]\d\d:?\d\d$/.test(s)) s += 'Z';
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}

// One formatter per style, made on first use: Date's toLocale*String() builds a new one on
// every call, which for a page of messages and a sidebar of sessions cost more than the rest
// of their rendering.
const FORMATS = {
  full: { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' },
  time: { hour: '2-digit', minute: '2-digit' },
  weekday: { weekday: 'short' },
  date: { year: 'numeric', month: 'short', day: 'numeric' },
};
const formatters = {};

function formatDate(style, d) {
  formatters[style] ||= new Intl.DateTimeFormat(undefined, FORMATS[style]);
  return formatters[style].format(d);
}

/** Date and time in the user's locale (the hover timestamp). */
export function fullTime(value) {
  const d = parseTime(value);
  return d ? formatDate('full', d) : '';
}

/** A short date for lists: time today, weekday this week, date otherwise. */
export function shortTime(value) {
  const d = parseTime(value);
  if (!d) return '';
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return formatDate('time', d);
  if (now - d < 6 * 864e5) return formatDate('weekday', d);
  return formatDate('date', d);
}

/** An inline error with an optional Retry button, for any area. */
export function errorBox(message, onRetry) {
  const box = el('div', { class: 'inline-error', role: 'alert' }, el('span', {}, message));
  if (onRetry) {
    const btn = el('button', { type: 'button', class: 'retry' }, 'Retry');
    btn.addEventListener('click', () => { box.remove(); onRetry(); }, { once: true });
    box.append(' ', btn);
  }
  return box;
}

export function formatTokens(n) {
  if (n === null || n === undefined) return '?';
  return n >= 10000 ? (n / 1000).toFixed(1) + 'k' : String(n);
}

export function formatCost(usd) {
  if (usd === null || usd === undefined) return null;
  return '$' + (usd < 0.01 ? usd.toFixed(4) : usd.toFixed(2));
}

/** Download a Response body as a file named by its Content-Disposition (or `fallback`). */
export async function download(response, fallback) {
  const cd = response.headers.get('Content-Disposition') || '';
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(cd);
  const name = m ? decodeURIComponent(m[1]) : fallback;
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: name.replace(/[/\\]/g, '_') });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
