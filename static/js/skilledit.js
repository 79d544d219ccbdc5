// Editing a skill (description, triggers, body; a name for a new one) with the server's
// validation errors shown next to the field they name, and the version history: pick two
// versions to see a line diff, restore an earlier one (which becomes a new version).

import { get, post, put, enc, qs, ApiError } from './api.js';
import { el, fullTime, errorBox, confirmDialog } from './ui.js';

const NAME_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export class SkillEditor {
  constructor(skill, { onSaved, onCancel }) {
    this.skill = skill;
    this.onSaved = onSaved;
    this.fields = {};
    const form = el('form', { class: 'skill-editor', novalidate: true, 'aria-label': skill ? 'Edit ' + skill.name : 'New skill' });
    form.append(el('h2', {}, skill ? 'Edit ' + skill.name : 'New skill'));
    if (!skill) form.append(this._field('name', 'Name', 'input', '', 'Lowercase letters, digits and single hyphens, up to 64 characters.'));
    form.append(
      this._field('description', 'Description', 'textarea', skill ? skill.description : '', 'What it does and when to use it (up to 1,024 characters).', 3),
      this._field('triggers', 'Triggers', 'input', skill ? joinTriggers(skill.triggers) : '', 'Comma-separated keywords.'),
      this._field('body', 'Body (markdown steps)', 'textarea', skill ? skill.body : '', '', 16),
    );
    this.formError = el('div', { class: 'form-error', role: 'alert' });
    const save = el('button', { type: 'submit', class: 'primary' }, skill ? 'Save new version' : 'Create skill');
    const cancel = el('button', { type: 'button' }, 'Cancel');
    cancel.addEventListener('click', onCancel);
    form.append(this.formError, el('div', { class: 'form-actions' }, save, cancel));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.save(save);
    });
    this.node = form;
  }

  focus() {
    (this.fields.name || this.fields.description).input.focus();
  }

  _field(name, label, tag, value, help, rows) {
    const id = 'skill-field-' + name;
    const input = el(tag, { id, name, rows: rows || null, 'aria-describedby': id + '-help ' + id + '-error' });
    input.value = value || '';
    const error = el('p', { class: 'field-error', id: id + '-error' });
    this.fields[name] = { input, error };
    return el('div', { class: 'field' }, el('label', { for: id }, label), input,
      el('p', { class: 'field-help', id: id + '-help' }, help), error);
  }

  _clearErrors() {
    this.formError.textContent = '';
    for (const f of Object.values(this.fields)) {
      f.error.textContent = '';
      f.input.removeAttribute('aria-invalid');
    }
  }

  _fieldError(name, message) {
    const f = this.fields[name];
    if (!f) {
      this.formError.textContent = message;
      return;
    }
    f.error.textContent = message;
    f.input.setAttribute('aria-invalid', 'true');
    f.input.focus();
  }

  async save(button) {
    this._clearErrors();
    const values = Object.fromEntries(Object.entries(this.fields).map(([k, f]) => [k, f.input.value]));
    if (!this.skill && (!NAME_RE.test(values.name) || values.name.length > 64)) {
      return this._fieldError('name', 'Use 1-64 lowercase letters, digits and single inner hyphens.');
    }
    if (!values.description.trim()) return this._fieldError('description', 'A description is required.');
    const triggers = values.triggers.split(',').map((t) => t.trim()).filter(Boolean);
    button.disabled = true;
    try {
      let data;
      if (this.skill) {
        data = await put('/api/skills/' + enc(this.skill.name), { description: values.description, body: values.body, triggers });
      } else {
        data = await post('/api/skills', { name: values.name, description: values.description, body: values.body, triggers });
      }
      this.onSaved((data && (data.skill || data)) || { name: this.skill ? this.skill.name : values.name });
    } catch (e) {
      if (e instanceof ApiError && e.field) this._fieldError(e.field, e.message);
      else if (e instanceof ApiError && e.status === 409) this._fieldError('name', e.message);
      else this.formError.textContent = e.message;
    } finally {
      button.disabled = false;
    }
  }
}

export class SkillHistory {
  constructor(skill, { onRestored }) {
    this.skill = skill;
    this.onRestored = onRestored;
    this.list = el('ol', { class: 'versions' });
    this.diff = el('div', { class: 'diff-view', 'aria-live': 'polite' });
    this.node = el('section', { class: 'skill-history', 'aria-label': 'Version history' },
      el('h3', {}, 'Version history'), this.list, this.diff);
  }

  /** The versions, newest first, and a diff (default: the last change; the server computes it). */
  async load(from, to) {
    let data;
    try {
      data = await get('/api/skills/' + enc(this.skill.name) + '/versions' + qs({ from, to }));
    } catch (e) {
      this.diff.replaceChildren(errorBox(e.message, () => this.load(from, to)));
      return;
    }
    const versions = data.versions || [];
    const current = versions.find((v) => v.current) || versions[versions.length - 1];
    this.list.replaceChildren(...[...versions].reverse().map((v) => {
      const li = el('li', { dataset: { version: String(v.version) } },
        el('span', { class: 'version-label' }, 'v' + v.version + (v.current ? ' (current)' : '')),
        el('time', { datetime: v.updated_at || '' }, fullTime(v.updated_at)));
      if (!v.current) {
        const show = el('button', { type: 'button', class: 'show-diff' }, 'Diff with current');
        show.addEventListener('click', () => this.load(v.version, current.version));
        const restore = el('button', { type: 'button', class: 'restore' }, 'Restore v' + v.version);
        restore.addEventListener('click', () => this.restore(v.version));
        li.append(show, restore);
      }
      return li;
    }));
    if (versions.length < 2) {
      this.diff.replaceChildren(el('p', { class: 'hint' }, 'Only one version so far.'));
      return;
    }
    const d = data.diff || {};
    this.diff.replaceChildren(el('h4', {}, 'Changes from v' + d.from + ' to v' + d.to), diffView(d.text || ''));
  }

  async restore(version) {
    if (!(await confirmDialog('Restore version ' + version + '? It becomes a new version; nothing is lost.', 'Restore'))) return;
    try {
      const data = await post('/api/skills/' + enc(this.skill.name) + '/restore', { version });
      this.onRestored((data && (data.skill || data)) || {});
    } catch (e) {
      this.diff.replaceChildren(errorBox('Restore failed: ' + e.message));
    }
  }
}

/** A unified diff as coloured lines (text only). */
function diffView(text) {
  const pre = el('pre', { class: 'diff' });
  if (!text.trim()) {
    pre.textContent = 'No differences.';
    return pre;
  }
  for (const line of text.split('\n')) {
    const kind = line.startsWith('+++') || line.startsWith('---') ? 'file'
      : line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'same';
    pre.append(el('span', { class: kind }, line + '\n'));
  }
  return pre;
}

function joinTriggers(t) {
  return Array.isArray(t) ? t.join(', ') : t || '';
}
