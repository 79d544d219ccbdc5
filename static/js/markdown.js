// Markdown from untrusted sources (models, tools, skills, imports) -> sanitized DOM.
//
// Every piece goes through marked and then DOMPurify; nothing model-made reaches innerHTML
// any other way. On top of DOMPurify's defaults: no style attributes or <style> (they would be
// CSP violations), no forms, links only to http(s)/mailto/in-page targets and opened with
// rel="noopener noreferrer", and images only from this server or small raster data: URLs
// (a remote image is a tracking pixel and a CSP violation), otherwise shown as a link.

import { marked, Lexer, Parser } from '../vendor/marked.esm.js';
import '../vendor/purify.min.js';

const DOMPurify = globalThis.DOMPurify;

marked.setOptions({ gfm: true, breaks: false, async: false });

// Raw HTML in markdown is shown as text, except a few attribute-less formatting tags.
// DOMPurify would remove the rest anyway, but chromium reports CSP violations for handlers,
// styles and <base> in the document DOMPurify parses, so hostile markup never gets that far.
const KEEP_TAGS = new Set(['br', 'b', 'i', 'u', 's', 'em', 'strong', 'sub', 'sup', 'kbd', 'mark', 'del', 'ins', 'small', 'details', 'summary', 'p', 'hr']);
const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESC[c]);
}

function rawHtml(text) {
  return String(text).split(/(<\/?[a-zA-Z][a-zA-Z0-9]*\s*\/?>)/).map((part) => {
    const m = /^<\/?([a-zA-Z][a-zA-Z0-9]*)\s*\/?>$/.exec(part);
    return m && KEEP_TAGS.has(m[1].toLowerCase()) ? part.toLowerCase() : escapeHtml(part);
  }).join('');
}

marked.use({ renderer: { html: (token) => rawHtml(token.text) } });

const SAFE_LINK = /^(https?:|mailto:)/i;
const SAFE_IMG_DATA = /^data:image\/(png|gif|jpeg|webp);base64,/i;

function isRelative(href) {
  return href.startsWith('#') || (href.startsWith('/') && !href.startsWith('//'));
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = (node.getAttribute('href') || '').trim();
    if (href && !(SAFE_LINK.test(href) || isRelative(href))) node.removeAttribute('href');
    if (node.hasAttribute('href') && !href.startsWith('#')) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
      node.setAttribute('title', href);
    }
  }
  if (node.tagName === 'IMG') {
    const src = (node.getAttribute('src') || '').trim();
    const ok = (src.startsWith('/') && !src.startsWith('//')) || SAFE_IMG_DATA.test(src);
    if (!ok) {
      const link = document.createElement('a');
      link.textContent = '[image: ' + (node.getAttribute('alt') || 'untitled') + ']';
      if (/^https?:/i.test(src)) {
        link.setAttribute('href', src);
        link.setAttribute('target', '_blank');
        link.setAttribute('rel', 'noopener noreferrer');
        link.setAttribute('title', src);
      }
      node.replaceWith(link);
    }
  }
});

const PURIFY = {
  // Media and forms would load or submit off-site (CSP violations, tracking); style would be one.
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'option', 'dialog', 'template',
    'audio', 'video', 'source', 'track', 'picture'],
  FORBID_ATTR: ['style', 'id', 'name', 'srcset', 'action', 'formaction', 'background', 'poster', 'ping'],
  ALLOW_DATA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
};

/** Sanitize an HTML string into a DocumentFragment. */
export function sanitize(html) {
  return DOMPurify.sanitize(html, PURIFY);
}

/** Render a whole markdown text to a sanitized DocumentFragment. */
export function renderMarkdown(text) {
  return sanitize(marked.parse(String(text || '')));
}

/** Copy-to-clipboard buttons on every code block of `root` (wired by the caller's delegate). */
export function addCodeCopyButtons(root) {
  for (const pre of root.querySelectorAll('pre')) {
    if (pre.querySelector(':scope > .copy-code')) continue;
    const btn = document.createElement('button');
    btn.type = 'button';
    btn.className = 'copy-code';
    btn.dataset.action = 'copy-code';
    btn.textContent = 'Copy';
    btn.setAttribute('aria-label', 'Copy code');
    pre.prepend(btn);
  }
}

/**
 * Markdown that grows while it streams. Blocks that can no longer change are rendered and
 * sanitized once and stay in the DOM; only the tail (the last two blocks, since a list or a
 * paragraph may still absorb what comes next) is redrawn, at most once per animation frame.
 * A frame handles at most FRAME_CHARS of new text, so a burst (a replay after a reload, a
 * fast local model) is drawn over a few frames instead of one long task.
 */
const FRAME_CHARS = 800;

export class StreamingMarkdown {
  constructor(container) {
    this.container = container;
    this.text = '';
    this.frozenUpTo = 0; // characters of `text` already rendered into frozen blocks
    this.live = document.createElement('div');
    this.live.className = 'md-live';
    container.append(this.live);
    this.pending = false;
    this.finishing = false;
    this.finished = false;
  }

  append(delta) {
    this.text += String(delta).replace(/\r/g, ''); // raw lengths below must add up
    this._schedule();
  }

  /** The answer is complete: render the rest for good (over as many frames as it needs). */
  finish() {
    this.finishing = true;
    this._schedule();
  }

  _schedule() {
    if (this.pending || this.finished) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      if (!this._draw(this.finishing)) this._schedule();
      else if (this.finishing) this._seal();
    });
  }

  _seal() {
    this.finished = true;
    this.live.replaceWith(...this.live.childNodes);
    addCodeCopyButtons(this.container);
  }

  /** Draw one frame's worth; true when everything received so far is drawn. */
  _draw(final) {
    const tail = this.text.slice(this.frozenUpTo);
    let source = tail;
    let partial = false;
    if (tail.length > FRAME_CHARS) {
      source = tail.slice(0, FRAME_CHARS);
      partial = true;
    }
    let tokens = Lexer.lex(source, marked.defaults);
    if (partial && tokens.length <= 2) {
      // One block longer than a frame's budget (a long code block): take it whole.
      source = tail;
      partial = false;
      tokens = Lexer.lex(source, marked.defaults);
    }
    const keep = final && !partial ? tokens.length : Math.max(0, tokens.length - 2);
    if (keep > 0) {
      const done = tokens.slice(0, keep);
      const frag = sanitize(Parser.parse(done, marked.defaults));
      addCodeCopyButtons(frag);
      this.live.before(frag);
      this.frozenUpTo += done.reduce((n, t) => n + t.raw.length, 0);
    }
    const rest = tokens.slice(keep);
    this.live.replaceChildren(rest.length ? sanitize(Parser.parse(rest, marked.defaults)) : '');
    return !partial && (!final || this.frozenUpTo === this.text.length);
  }
}
