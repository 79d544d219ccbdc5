// Memory search over all history (/memory?q=). The store marks matches with « »; the snippet
// is HTML-escaped first (by building text nodes) and only then are the markers turned into
// <mark> elements, so a snippet can never smuggle markup in.

import { get, qs } from './api.js';
import { el, fullTime, shortTime, errorBox } from './ui.js';

const $ = (id) => document.getElementById(id);
const LIMIT = 50;

/** « » -> <mark>, everything else as text. Unbalanced markers are shown as they are. */
export function snippetNodes(snippet) {
  const frag = document.createDocumentFragment();
  const parts = String(snippet || '').split(/(«[^«»]*»)/);
  for (const part of parts) {
    if (part.startsWith('«') && part.endsWith('»') && part.length >= 2) {
      frag.append(el('mark', {}, part.slice(1, -1)));
    } else if (part) {
      frag.append(document.createTextNode(part));
    }
  }
  return frag;
}

export class MemorySearch {
  constructor({ onOpenHit }) {
    this.onOpenHit = onOpenHit;
    this.form = $('search-form');
    this.results = $('search-results');
    this.status = $('search-status');
    this.seq = 0;
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.run(true);
    });
    for (const id of ['search-role', 'search-from', 'search-to']) {
      $(id).addEventListener('change', () => {
        if ($('search-q').value.trim()) this.run(true);
      });
    }
    this.results.addEventListener('click', (e) => {
      const a = e.target.closest('a.hit-link');
      if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      this.onOpenHit(a.dataset.session, a.dataset.message);
    });
  }

  /** Fill the form from the URL (?q=&role=&from=&to=) and search if there is a query. */
  fromUrl(query) {
    const params = new URLSearchParams(location.search);
    $('search-q').value = query || params.get('q') || '';
    $('search-role').value = params.get('role') || '';
    $('search-from').value = params.get('from') || '';
    $('search-to').value = params.get('to') || '';
    if ($('search-q').value.trim()) this.run(false);
    else {
      this.results.replaceChildren();
      this.status.textContent = 'Search every conversation, including imported ones.';
    }
  }

  focus() {
    $('search-q').focus();
  }

  async run(pushUrl) {
    const q = $('search-q').value.trim();
    const role = $('search-role').value;
    const from = $('search-from').value;
    const to = $('search-to').value;
    if (pushUrl) history.replaceState(history.state, '', '/memory' + qs({ q, role, from, to }));
    if (!q) return;
    const seq = ++this.seq;
    this.status.textContent = 'Searching…';
    let data;
    try {
      // The server filters by role and dates (a bare `until` date includes that day); the
      // same filters are applied here too, so the page shows exactly what it promises.
      data = await get('/api/memory/search' + qs({ q, limit: LIMIT, role, since: from, until: to }));
    } catch (e) {
      if (seq !== this.seq) return;
      this.status.textContent = '';
      this.results.replaceChildren(el('li', {}, errorBox(e.message, () => this.run(false))));
      return;
    }
    if (seq !== this.seq) return;
    const hits = (data.results || []).filter((h) => keep(h, role, from, to));
    this.results.replaceChildren(...hits.map((h) => this._render(h)));
    this.status.textContent = hits.length ? hits.length + (hits.length === 1 ? ' result' : ' results') : 'No matches.';
  }

  _render(h) {
    const href = '/sessions/' + encodeURIComponent(h.session_id) + '#m' + encodeURIComponent(h.message_id);
    return el('li', { class: 'hit' },
      el('a', { class: 'hit-link', href, dataset: { session: String(h.session_id), message: String(h.message_id) } },
        el('span', { class: 'hit-title' }, h.session_title || 'Untitled chat')),
      el('span', { class: 'hit-meta' },
        el('span', { class: 'hit-role role-' + safeRole(h.role) }, h.role || ''),
        el('time', { datetime: h.created_at, title: fullTime(h.created_at) }, shortTime(h.created_at))),
      el('p', { class: 'snippet' }, snippetNodes(h.snippet)));
  }
}

function safeRole(role) {
  return /^[a-z]+$/.test(role || '') ? role : 'other';
}

function keep(hit, role, from, to) {
  if (role && hit.role !== role) return false;
  const day = String(hit.created_at || '').slice(0, 10);
  if (from && day && day < from) return false;
  if (to && day && day > to) return false;
  return true;
}
