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

// Set once: a config passed to every sanitize() call is parsed again on every call (DOMPurify
// rebuilds its allow-lists each time), which was a third of a long session's first paint.
DOMPurify.setConfig(PURIFY);

/** Sanitize an HTML string into a DocumentFragment. */
export function sanitize(html) {
  return DOMPurify.sanitize(html);
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
 *
 * Each frame's work is bounded so streaming never holds the main thread (bench/bench_page.py
 * counts tasks over 50 ms): a frame takes in at most `budget` characters of new text, and the
 * budget follows what the last frames cost (DRAW_MS each), so a slow or busy machine draws
 * smaller slices. A burst (a replay after a reload, a fast local model) is drawn over a few
 * frames instead of one long task. An open code fence, the one block that grows long, is
 * shown as plain text until it closes, instead of re-rendering the whole block every frame.
 */
const DRAW_MS = 6; // what one frame's markdown work should cost
const BUDGET_MIN = 120;
const BUDGET_MAX = 4000;
const OPEN_FENCE = /^ {0,3}(`{3,}|~{3,})[^\n]*\n/;

export class StreamingMarkdown {
  constructor(container) {
    this.container = container;
    this.text = '';
    this.frozenUpTo = 0; // characters of `text` already rendered into frozen blocks
    this.budget = 600; // characters of new text one frame takes in (adapts, see above)
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
      const started = performance.now();
      const before = this.frozenUpTo;
      const caughtUp = this._draw(this.finishing);
      this._adapt(performance.now() - started, this.frozenUpTo - before);
      if (!caughtUp) this._schedule();
      else if (this.finishing) this._seal();
    });
  }

  /** Size the next frame's slice from what this one cost per character frozen. */
  _adapt(ms, chars) {
    if (chars < 50 || ms <= 0) return;
    const fit = (chars * DRAW_MS) / ms;
    this.budget = Math.round(Math.min(BUDGET_MAX, Math.max(BUDGET_MIN, (this.budget + fit) / 2)));
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
    if (tail.length > this.budget) {
      // Cut at a line end, so a block is not split mid-line.
      const cut = tail.lastIndexOf('\n', this.budget);
      source = tail.slice(0, cut > 0 ? cut + 1 : this.budget);
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
    this._drawLive(tokens.slice(keep), final);
    return !partial && (!final || this.frozenUpTo === this.text.length);
  }

  /** The blocks that may still change: re-rendered, except an open fence shown as text. */
  _drawLive(rest, final) {
    if (!rest.length) {
      this.live.replaceChildren();
      return;
    }
    const last = rest[rest.length - 1];
    const open = !final && last.type === 'code' && OPEN_FENCE.exec(last.raw);
    if (open && !closesFence(last.raw, open[1])) {
      const before = rest.slice(0, -1);
      const pre = document.createElement('pre');
      pre.className = 'streaming-code';
      const code = document.createElement('code');
      code.textContent = last.raw.slice(open[0].length);
      pre.append(code);
      this.live.replaceChildren(before.length ? sanitize(Parser.parse(before, marked.defaults)) : '', pre);
      return;
    }
    this.live.replaceChildren(sanitize(Parser.parse(rest, marked.defaults)));
  }
}

/** Whether a fenced block's raw text has its closing fence yet. */
function closesFence(raw, fence) {
  const lines = raw.replace(/\n+$/, '').split('\n');
  if (lines.length < 2) return false;
  const end = lines[lines.length - 1].trim();
  return end.length >= fence.length && end[0] === fence[0] && /^(`+|~+)$/.test(end);
}
