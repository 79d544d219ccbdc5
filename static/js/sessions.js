// The sidebar: sessions newest first, paged in as the list scrolls, renamed in place,
// deleted after a confirmation, and a new-chat button. On phones it is a drawer.

import { get, patch, del, enc, qs, takeBoot } from './api.js';
import { el, shortTime, fullTime, confirmDialog, announce } from './ui.js';

const PAGE = 40; // about two screens of titles; more load as the list scrolls
const $ = (id) => document.getElementById(id);

export class Sidebar {
  constructor({ onOpen, onNew, onDeleted }) {
    this.onOpen = onOpen;
    this.onNew = onNew;
    this.onDeleted = onDeleted;
    this.list = $('session-list');
    this.status = $('sidebar-status');
    this.next = undefined; // cursor; null when the end was reached
    this.loading = false;
    this.activeId = null;
    this.sentinel = el('li', { class: 'sentinel', 'aria-hidden': 'true' });
    this.list.append(this.sentinel);
    new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) this.loadMore();
    }, { root: $('sidebar') }).observe(this.sentinel);
    $('new-chat').addEventListener('click', () => {
      this.closeDrawer();
      this.onNew();
    });
    this.list.addEventListener('click', (e) => this._onClick(e));
    this._drawer();
  }

  async loadMore() {
    if (this.loading || this.next === null) return;
    this.loading = true;
    this.status.textContent = 'Loading…';
    try {
      // The first page came with the HTML (web/pages.py asks for the same PAGE).
      const data = (this.next === undefined && takeBoot('sessions')) || await get('/api/sessions' + qs({ limit: PAGE, before: this.next }));
      for (const s of data.sessions) {
        if (!this._item(s.id)) this.sentinel.before(this._render(s));
      }
      this.next = data.next || null;
      this.status.textContent = this.list.children.length > 1 ? '' : 'No conversations yet.';
    } catch (e) {
      this.status.textContent = e.message;
    } finally {
      this.loading = false;
    }
  }

  /** A session was opened, created or changed elsewhere: show it, mark it current. */
  upsert(session, { top = false } = {}) {
    const old = this._item(session.id);
    const fresh = this._render(session);
    this.activeId = String(session.id);
    if (top) {
      if (old) old.remove();
      this.list.prepend(fresh);
    } else if (old) {
      old.replaceWith(fresh);
    }
    this.setActive(session.id);
    if (this.status.textContent === 'No conversations yet.') this.status.textContent = '';
  }

  setActive(id) {
    this.activeId = id === null || id === undefined ? null : String(id);
    for (const li of this.list.querySelectorAll('li[data-id]')) {
      const on = li.dataset.id === this.activeId;
      li.classList.toggle('active', on);
      const link = li.querySelector('a.session-link');
      if (on) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
  }

  _item(id) {
    return this.list.querySelector('li[data-id="' + CSS.escape(String(id)) + '"]');
  }

  _render(s) {
    const title = s.title || 'Untitled chat';
    const hover = [title, s.summary, fullTime(s.updated_at || s.created_at),
      s.message_count !== undefined ? s.message_count + ' messages' : ''].filter(Boolean).join('\n');
    const link = el('a', { class: 'session-link', href: '/sessions/' + enc(s.id), title: hover },
      el('span', { class: 'session-title' }, title),
      el('time', { class: 'session-date', datetime: s.updated_at || s.created_at }, shortTime(s.updated_at || s.created_at)));
    const rename = el('button', { type: 'button', class: 'icon-btn', dataset: { action: 'rename' }, 'aria-label': 'Rename ' + title, title: 'Rename' }, '✎');
    const remove = el('button', { type: 'button', class: 'icon-btn', dataset: { action: 'delete' }, 'aria-label': 'Delete ' + title, title: 'Delete' }, '✕');
    const li = el('li', { dataset: { id: String(s.id) } }, link, el('span', { class: 'session-actions' }, rename, remove));
    if (String(s.id) === this.activeId) li.classList.add('active');
    return li;
  }

  _onClick(e) {
    const li = e.target.closest('li[data-id]');
    if (!li) return;
    const btn = e.target.closest('button[data-action]');
    if (btn && btn.dataset.action === 'rename') return this._rename(li);
    if (btn && btn.dataset.action === 'delete') return this._delete(li);
    const link = e.target.closest('a.session-link');
    if (link && !e.ctrlKey && !e.metaKey && !e.shiftKey && e.button === 0) {
      e.preventDefault();
      this.closeDrawer();
      this.onOpen(li.dataset.id);
    }
  }

  _rename(li) {
    const titleEl = li.querySelector('.session-title');
    const old = titleEl.textContent;
    const input = el('input', { type: 'text', class: 'rename-input', maxlength: '200', 'aria-label': 'New title' });
    input.value = old;
    const link = li.querySelector('a.session-link');
    link.hidden = true;
    li.prepend(input);
    input.focus();
    input.select();
    let finished = false;
    const finish = async (save) => {
      if (finished) return;
      finished = true;
      const title = input.value.trim();
      input.remove();
      link.hidden = false;
      if (!save || !title || title === old) return link.focus();
      titleEl.textContent = title;
      try {
        const data = await patch('/api/sessions/' + enc(li.dataset.id), { title });
        const s = data && data.session ? data.session : { id: li.dataset.id, title };
        titleEl.textContent = s.title || title;
        li.querySelectorAll('button').forEach((b) => b.setAttribute('aria-label', b.title + ' ' + titleEl.textContent));
        if (String(li.dataset.id) === this.activeId) document.getElementById('chat-title').textContent = titleEl.textContent;
        announce('Renamed.');
      } catch (err) {
        titleEl.textContent = old;
        announce('Rename failed: ' + err.message);
        this.status.textContent = 'Rename failed: ' + err.message;
      }
      link.focus();
    };
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        finish(true);
      } else if (e.key === 'Escape') {
        e.preventDefault();
        finish(false);
      }
    });
    input.addEventListener('blur', () => finish(true));
  }

  async _delete(li) {
    const title = li.querySelector('.session-title').textContent;
    if (!(await confirmDialog('Delete “' + title + '” and all its messages? This cannot be undone.'))) return;
    try {
      await del('/api/sessions/' + enc(li.dataset.id));
      const id = li.dataset.id;
      li.remove();
      announce('Deleted.');
      this.onDeleted(id);
    } catch (e) {
      this.status.textContent = 'Delete failed: ' + e.message;
    }
  }

  // -- phone drawer --------------------------------------------------------------------------

  _drawer() {
    const toggle = $('drawer-toggle');
    toggle.addEventListener('click', () => (document.body.classList.contains('drawer-open') ? this.closeDrawer() : this.openDrawer()));
    $('drawer-backdrop').addEventListener('click', () => this.closeDrawer());
    $('sidebar').addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && document.body.classList.contains('drawer-open')) this.closeDrawer();
    });
  }

  openDrawer() {
    document.body.classList.add('drawer-open');
    $('drawer-toggle').setAttribute('aria-expanded', 'true');
    $('drawer-backdrop').hidden = false;
    $('new-chat').focus();
  }

  closeDrawer() {
    if (!document.body.classList.contains('drawer-open')) return;
    document.body.classList.remove('drawer-open');
    $('drawer-toggle').setAttribute('aria-expanded', 'false');
    $('drawer-backdrop').hidden = true;
    $('drawer-toggle').focus();
  }
}
