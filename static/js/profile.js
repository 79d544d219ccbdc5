// Profile memory: USER.md (who the user is) and MEMORY.md (the agent's notes), edited as
// text, with each file's size limit shown as the user types and the entries the guard
// withholds from the model flagged with the guard's reason.
//
// GET /api/memory/profile gives {profile: {user|memory: {file, text, entries: [{text, flags}],
// used, limit}}}; an entry with flags is withheld from the model. PUT sends {<target>: text}
// and a 400 names the target at fault.

import { get, put, ApiError } from './api.js';
import { el, errorBox, announce } from './ui.js';

const TARGETS = [
  { key: 'user', file: 'USER.md', title: 'About you (USER.md)', help: 'Who you are and what you prefer. The model sees it at the start of every session.' },
  { key: 'memory', file: 'MEMORY.md', title: "Hermes' notes (MEMORY.md)", help: 'Facts and lessons the agent keeps for itself. Entries are separated by a line holding only §.' },
];

export class Profile {
  constructor(root) {
    this.root = root;
  }

  async load() {
    this.root.replaceChildren(el('p', { class: 'hint' }, 'Loading…'));
    let data;
    try {
      data = await get('/api/memory/profile');
    } catch (e) {
      this.root.replaceChildren(errorBox(e.message, () => this.load()));
      return;
    }
    const profile = data.profile || data;
    this.root.replaceChildren(...TARGETS.map((t) => this._editor(t, normalise(profile, t.key))));
  }

  _editor(target, info) {
    const id = 'profile-' + target.key;
    const area = el('textarea', { id, rows: 12, spellcheck: 'true', 'aria-describedby': id + '-help ' + id + '-count ' + id + '-error' });
    area.value = info.text;
    const count = el('p', { class: 'char-count', id: id + '-count', 'aria-live': 'polite' });
    const error = el('p', { class: 'field-error', id: id + '-error', role: 'alert' });
    const update = () => {
      const used = area.value.trim().length;
      count.textContent = info.limit ? used.toLocaleString() + ' / ' + info.limit.toLocaleString() + ' characters' : used.toLocaleString() + ' characters';
      count.classList.toggle('over', Boolean(info.limit && used > info.limit));
    };
    area.addEventListener('input', update);
    update();
    const save = el('button', { type: 'button', class: 'primary' }, 'Save ' + target.file);
    save.addEventListener('click', async () => {
      error.textContent = '';
      area.removeAttribute('aria-invalid');
      if (info.limit && area.value.trim().length > info.limit) {
        error.textContent = target.file + ' is over its limit of ' + info.limit + ' characters: shorten or merge entries first.';
        area.setAttribute('aria-invalid', 'true');
        return;
      }
      save.disabled = true;
      try {
        await put('/api/memory/profile', { [target.key]: area.value });
        announce(target.file + ' saved.');
        await this.load();
        document.getElementById(id)?.focus();
      } catch (e) {
        error.textContent = e instanceof ApiError ? e.message : String(e);
        area.setAttribute('aria-invalid', 'true');
      } finally {
        save.disabled = false;
      }
    });
    const section = el('section', { class: 'profile-file', 'aria-labelledby': id + '-title' },
      el('h2', { id: id + '-title' }, target.title),
      el('p', { class: 'field-help', id: id + '-help' }, target.help),
      area, count, error);
    if (info.flagged.length) {
      section.append(el('div', { class: 'flagged', role: 'note' },
        el('h3', {}, 'Withheld from the model'),
        el('p', { class: 'hint' }, 'These entries look like instructions or secrets, so the model does not see them. Edit or remove them above.'),
        el('ul', {}, ...info.flagged.map((f) => el('li', {}, el('q', {}, f.entry), ' — ', el('span', { class: 'reason' }, f.reason))))));
    }
    section.append(el('div', { class: 'form-actions' }, save));
    return section;
  }
}

function normalise(profile, key) {
  const info = profile[key] || {};
  const flagged = (info.entries || [])
    .filter((e) => Array.isArray(e.flags) && e.flags.length)
    .map((e) => ({ entry: e.text || '', reason: e.flags.join('; ') }));
  return { text: info.text || '', limit: Number(info.limit) || null, flagged };
}
