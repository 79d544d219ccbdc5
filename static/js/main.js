// Entry point: wires the areas together and routes between views without reloading.
// URLs are SPEC's pages (/, /sessions/<id>#m<id>, /memory?q=, /skills/<name>), so a reload
// or a bookmark shows the same view; the server renders the same shell for all of them.

import { get, qs } from './api.js';
import { Chat } from './chat.js';
import { Sidebar } from './sessions.js';

const $ = (id) => document.getElementById(id);
const VIEWS = ['chat', 'memory', 'skills'];

const sidebar = new Sidebar({
  onOpen: (id) => navigate('/sessions/' + encodeURIComponent(id)),
  onNew: () => navigate('/', { state: { fresh: true } }),
  onDeleted: (id) => {
    if (chat.session && String(chat.session.id) === String(id)) navigate('/', { replace: true, state: { fresh: true } });
  },
});
const chat = new Chat({
  onSessionChanged: (session, opts = {}) => {
    sidebar.upsert(session, opts);
    const want = '/sessions/' + encodeURIComponent(session.id);
    if (currentView() === 'chat' && location.pathname !== want) history.replaceState({}, '', want + location.hash);
    document.title = (session.title || 'Untitled chat') + ' · Hermes';
  },
});
// The memory and skills views load their code the first time they are shown, so the
// dashboard's first load carries only the chat (see bench/bench_page.py for the budget).
const views = {};
async function area(name) {
  if (!views[name]) {
    views[name] = (async () => {
      if (name === 'search') {
        const { MemorySearch } = await import('./search.js');
        return new MemorySearch({ onOpenHit: (sid, mid) => navigate('/sessions/' + encodeURIComponent(sid) + '#m' + mid) });
      }
      if (name === 'skills') {
        const { Skills } = await import('./skills.js');
        return new Skills({ onNavigate: (path, opts) => navigate(path, opts) });
      }
      const { Profile } = await import('./profile.js');
      return new Profile($('profile'));
    })();
  }
  return views[name];
}

function currentView() {
  return document.getElementById('app').dataset.view;
}

function showView(view) {
  document.getElementById('app').dataset.view = view;
  for (const v of VIEWS) {
    $('view-' + v).hidden = v !== view;
    const link = $('nav-' + v);
    if (v === view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

/** Parse a path into the view to show. */
function parse(url) {
  const u = new URL(url, location.origin);
  const path = u.pathname.replace(/\/+$/, '') || '/';
  let m;
  if ((m = /^\/sessions\/([^/]+)$/.exec(path))) {
    const hm = /^#m(\d+)$/.exec(u.hash);
    return { view: 'chat', sessionId: decodeURIComponent(m[1]), messageId: hm ? hm[1] : null };
  }
  if (path === '/memory') return { view: 'memory', query: u.searchParams.get('q') || '', tab: u.hash === '#profile' ? 'profile' : 'search' };
  if (path === '/skills') return { view: 'skills', skill: null };
  if ((m = /^\/skills\/([^/]+)$/.exec(path))) return { view: 'skills', skill: decodeURIComponent(m[1]) };
  return { view: 'chat', sessionId: null };
}

let routeSeq = 0;
let initialSession = document.getElementById('app').dataset.sessionId || null;

/** Show the view the URL names. `data-ready` on #app says when it is up (tests wait for it). */
async function route(state = {}) {
  const seq = ++routeSeq;
  const app = document.getElementById('app');
  app.dataset.ready = '';
  try {
    await show(state, () => seq === routeSeq);
  } finally {
    if (seq === routeSeq) app.dataset.ready = '1';
  }
}

async function show(state, current) {
  const r = parse(location.href);
  showView(r.view);
  if (r.view === 'chat') {
    if (r.sessionId) {
      if (!(chat.session && String(chat.session.id) === r.sessionId && !state.force)) await chat.open(r.sessionId, r.messageId);
      else if (r.messageId && !chat.transcript.reveal(r.messageId)) await chat.open(r.sessionId, r.messageId);
    } else if (state.fresh) {
      chat.newChat();
      sidebar.setActive(null);
      document.title = 'New chat · Hermes';
    } else {
      // "/" shows the newest session, or a new chat when there is none. On the first load
      // the server already named it (data-session-id), which saves a request.
      const named = initialSession;
      initialSession = null;
      if (named) {
        history.replaceState({}, '', '/sessions/' + encodeURIComponent(named));
        await chat.open(named);
        return;
      }
      try {
        const data = await get('/api/sessions' + qs({ limit: 1 }));
        if (!current()) return; // the user went elsewhere (New chat) meanwhile
        if (data.sessions.length) {
          history.replaceState({}, '', '/sessions/' + encodeURIComponent(data.sessions[0].id));
          await chat.open(String(data.sessions[0].id));
          return;
        }
      } catch {
        // fall through to a new chat; the sidebar shows the error
      }
      chat.newChat();
    }
  } else if (r.view === 'memory') {
    selectTab(r.tab);
    document.title = 'Memory · Hermes';
    if (r.tab === 'profile') await (await area('profile')).load();
    else (await area('search')).fromUrl(r.query);
  } else {
    document.title = (r.skill ? r.skill + ' · ' : '') + 'Skills · Hermes';
    await (await area('skills')).show(r.skill);
  }
}

/** Go to `path` inside the page (pushState), then show it. */
function navigate(path, { replace = false, state = {}, force = false } = {}) {
  const same = path === location.pathname + location.search + location.hash;
  if (replace || same) history.replaceState(state, '', path);
  else history.pushState(state, '', path);
  return route({ ...state, force });
}

function selectTab(tab) {
  for (const t of ['search', 'profile']) {
    const on = t === tab;
    $('tab-' + t).setAttribute('aria-selected', String(on));
    $('tab-' + t).tabIndex = on ? 0 : -1;
    $('panel-' + t).hidden = !on;
  }
}

$('tab-search').addEventListener('click', () => navigate('/memory' + (new URLSearchParams(location.search).get('q') ? location.search : '')));
$('tab-profile').addEventListener('click', () => navigate('/memory#profile'));
for (const v of VIEWS) {
  $('nav-' + v).addEventListener('click', (e) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(v === 'chat' ? (chat.session ? '/sessions/' + encodeURIComponent(chat.session.id) : '/') : '/' + v);
  });
}
document.querySelector('.brand').addEventListener('click', (e) => {
  if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  navigate('/');
});
// In-page links the page made itself (skill badges, source-session links, permalinks).
document.addEventListener('click', (e) => {
  const a = e.target.closest('a[href]');
  if (!a || e.defaultPrevented || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  if (a.target === '_blank' || a.closest('.md')) return; // model-made links open in a new tab
  const href = a.getAttribute('href');
  if (/^\/(sessions|skills|memory)(\/|$|\?|#)/.test(href)) {
    e.preventDefault();
    navigate(href);
  }
});
window.addEventListener('popstate', (e) => route(e.state || {}));
window.addEventListener('hashchange', () => {
  const r = parse(location.href);
  if (r.view === 'chat' && r.messageId && !chat.transcript.reveal(r.messageId)) route({ force: true });
});

// -- keyboard shortcuts (the list opens on "?") -----------------------------------------------

function typing(target) {
  return target.closest('input, textarea, select, [contenteditable="true"]');
}

document.addEventListener('keydown', (e) => {
  if (document.querySelector('dialog[open]')) return;
  if (e.altKey && !e.ctrlKey && !e.metaKey && (e.key === 'n' || e.key === 'N' || e.code === 'KeyN')) {
    e.preventDefault();
    navigate('/', { state: { fresh: true } }).then(() => chat.focus());
  } else if (e.altKey && !e.ctrlKey && !e.metaKey && (e.key === 'c' || e.key === 'C' || e.code === 'KeyC')) {
    e.preventDefault();
    chat.copyLastCode();
  } else if (typing(e.target)) {
    // keys typed into a field belong to the field
  } else if (e.key === '?') {
    e.preventDefault();
    $('shortcuts').showModal();
  } else if (e.key === '/') {
    e.preventDefault();
    if (currentView() === 'skills') area('skills').then((v) => v.focus());
    else if (currentView() === 'memory' && !$('panel-search').hidden) area('search').then((v) => v.focus());
    else navigate('/memory').then(() => area('search')).then((v) => v.focus());
  } else if (e.key === 'Escape' && chat.turn) {
    chat.stop();
  }
});
$('shortcuts-btn').addEventListener('click', () => $('shortcuts').showModal());

showView(currentView() || 'chat');
sidebar.loadMore();
route(history.state || {});
