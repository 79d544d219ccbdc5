// The skills view: the list (search, sort by uses or recency), one skill's rendered SKILL.md
// with its files and where it came from, delete, import and export. The editor and the
// version history live in skilledit.js.

import { get, del, post, request, enc, qs } from './api.js';
import { el, shortTime, fullTime, confirmDialog, announce, errorBox, download } from './ui.js';
import { renderMarkdown, addCodeCopyButtons } from './markdown.js';
import { SkillEditor, SkillHistory } from './skilledit.js';

const $ = (id) => document.getElementById(id);

export class Skills {
  constructor({ onNavigate }) {
    this.onNavigate = onNavigate; // (path) -> route without reload
    this.items = [];
    this.current = null;
    this.seq = 0;
    this.list = $('skills-list');
    this.detail = $('skill-detail');
    this.status = $('skills-status');
    let timer = null;
    $('skills-q').addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.load(), 200);
    });
    $('skills-sort').addEventListener('change', () => this._draw());
    $('skill-new').addEventListener('click', () => this.edit(null));
    $('skill-import').addEventListener('change', (e) => this._import(e.target));
    this.list.addEventListener('click', (e) => {
      const a = e.target.closest('a[data-skill]');
      if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      this.onNavigate('/skills/' + enc(a.dataset.skill));
    });
  }

  /** Enter the view: the list, and one skill when `name` is given. */
  async show(name) {
    await this.load();
    if (name) this.open(name);
    else {
      this.current = null;
      this.detail.replaceChildren(el('p', { class: 'hint' }, 'Pick a skill to read it, or create or import one.'));
      this._mark();
    }
  }

  focus() {
    $('skills-q').focus();
  }

  async load() {
    const seq = ++this.seq;
    const q = $('skills-q').value.trim();
    try {
      const data = await get('/api/skills' + qs({ q }));
      if (seq !== this.seq) return;
      this.items = data.skills || [];
      this.status.textContent = this.items.length ? '' : q ? 'No skill matches.' : 'No skills yet. Hermes learns them from multi-step tasks, or import one.';
      this._draw();
    } catch (e) {
      this.status.textContent = e.message;
    }
  }

  _draw() {
    const sort = $('skills-sort').value;
    const items = [...this.items];
    if (sort === 'uses') items.sort((a, b) => (b.uses || 0) - (a.uses || 0) || cmp(a.name, b.name));
    else if (sort === 'name') items.sort((a, b) => cmp(a.name, b.name));
    else items.sort((a, b) => cmp(String(b.updated_at || ''), String(a.updated_at || '')));
    this.list.replaceChildren(...items.map((s) => el('li', { dataset: { name: s.name } },
      el('a', { href: '/skills/' + enc(s.name), dataset: { skill: s.name } },
        el('span', { class: 'skill-name' }, s.name),
        el('span', { class: 'skill-meta' }, 'v' + (s.version || 1) + ' · ' + (s.uses || 0) + ' uses · ' + shortTime(s.updated_at))),
      el('p', { class: 'skill-desc' }, s.description || ''))));
    this._mark();
  }

  _mark() {
    for (const li of this.list.children) {
      const on = this.current && li.dataset.name === this.current.name;
      li.classList.toggle('active', Boolean(on));
      const a = li.querySelector('a');
      if (on) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
  }

  /** Show one skill: rendered body, metadata, files, actions. */
  async open(name) {
    this.detail.replaceChildren(el('p', { class: 'hint' }, 'Loading…'));
    let skill;
    try {
      const data = await get('/api/skills/' + enc(name));
      skill = data.skill || data;
    } catch (e) {
      this.detail.replaceChildren(errorBox(e.message, e.status === 404 ? null : () => this.open(name)));
      return;
    }
    this.current = skill;
    this._mark();
    const source = skill.source_session || (skill.metadata && skill.metadata['source-session']);
    const triggers = Array.isArray(skill.triggers) ? skill.triggers.join(', ') : skill.triggers || '';
    const actions = el('div', { class: 'skill-buttons' });
    const edit = el('button', { type: 'button' }, 'Edit');
    const history = el('button', { type: 'button' }, 'History');
    const exportBtn = el('button', { type: 'button' }, 'Export');
    const remove = el('button', { type: 'button', class: 'danger' }, 'Delete');
    actions.append(edit, history, exportBtn, remove);
    edit.addEventListener('click', () => this.edit(skill));
    history.addEventListener('click', () => this.history(skill));
    exportBtn.addEventListener('click', () => this._export(skill.name));
    remove.addEventListener('click', () => this._delete(skill.name));

    const body = el('div', { class: 'md skill-body' });
    body.append(renderMarkdown(skill.body || ''));
    addCodeCopyButtons(body);
    const meta = el('dl', { class: 'skill-facts' },
      el('dt', {}, 'Version'), el('dd', {}, String(skill.version || 1)),
      el('dt', {}, 'Uses'), el('dd', {}, String(skill.uses || 0)),
      el('dt', {}, 'Triggers'), el('dd', {}, triggers || '—'),
      el('dt', {}, 'Made by'), el('dd', {}, skill.created_by || 'unknown'),
      el('dt', {}, 'Updated'), el('dd', { title: fullTime(skill.updated_at) }, shortTime(skill.updated_at) || '—'));
    if (source) {
      meta.append(el('dt', {}, 'Learned in'), el('dd', {}, el('a', { href: '/sessions/' + enc(source), class: 'source-link' }, 'the session that taught it')));
    }
    const files = (skill.files || []).map((f) => (typeof f === 'string' ? { path: f } : f));
    const fileList = files.length
      ? el('ul', { class: 'skill-files' }, ...files.map((f) => el('li', {}, el('code', {}, f.path || f.name || ''),
        f.size !== undefined ? ' (' + f.size + ' bytes)' : '')))
      : el('p', { class: 'hint' }, 'No bundled files.');
    this.detail.replaceChildren(
      el('header', { class: 'skill-head' }, el('h2', {}, skill.name), actions),
      el('p', { class: 'skill-desc' }, skill.description || ''),
      meta,
      el('h3', {}, 'SKILL.md'),
      body,
      el('h3', {}, 'Files'),
      fileList,
      el('div', { class: 'skill-panel', id: 'skill-panel' }),
    );
  }

  edit(skill) {
    const editor = new SkillEditor(skill, {
      onSaved: (saved) => {
        announce('Skill saved.');
        this.load();
        this.onNavigate('/skills/' + enc(saved.name), { force: true });
      },
      onCancel: () => (skill ? this.open(skill.name) : this.show(null)),
    });
    this.detail.replaceChildren(editor.node);
    editor.focus();
  }

  history(skill) {
    const panel = $('skill-panel');
    const view = new SkillHistory(skill, {
      onRestored: (restored) => {
        announce('Restored as version ' + (restored.version || '') + '.');
        this.load();
        this.open(skill.name);
      },
    });
    panel.replaceChildren(view.node);
    view.load();
    panel.scrollIntoView({ block: 'start' });
  }

  async _delete(name) {
    if (!(await confirmDialog('Delete the skill “' + name + '” and its history? This cannot be undone.'))) return;
    try {
      await del('/api/skills/' + enc(name));
      announce('Skill deleted.');
      this.current = null;
      this.onNavigate('/skills');
    } catch (e) {
      this.detail.prepend(errorBox('Delete failed: ' + e.message));
    }
  }

  async _export(name) {
    try {
      const response = await request('GET', '/api/skills/' + enc(name) + '/export', { raw: true, headers: { Accept: 'application/zip' } });
      await download(response, name + '.zip');
    } catch (e) {
      this.detail.prepend(errorBox('Export failed: ' + e.message));
    }
  }

  async _import(input) {
    const file = input.files && input.files[0];
    input.value = '';
    if (!file) return;
    const form = new FormData();
    form.append('file', file, file.name);
    this.status.textContent = 'Importing ' + file.name + '…';
    try {
      const data = await post('/api/skills/import', form);
      const names = (data.skills || (data.skill ? [data.skill] : [])).map((s) => s.name);
      await this.load();
      if (names.length) await this.onNavigate('/skills/' + enc(names[0]));
      // Said last: reloading the list (above) resets the status line.
      this.status.textContent = names.length ? 'Imported ' + names.join(', ') + '.' : 'Imported.';
    } catch (e) {
      this.status.textContent = 'Import failed: ' + e.message;
    }
  }
}

function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}
