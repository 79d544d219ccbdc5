// Reading a turn's NDJSON stream, and picking it back up when it ends before `done`.
//
// A turn runs on the server whatever the connection does, so the client's only job is to
// keep reading: POST /api/sessions/<id>/turns starts one, GET /api/turns/<id>/events?after=<seq>
// replays from seq+1 and follows live. Events are deduplicated by seq, so a replay that
// overlaps what was already shown is harmless. Unknown event types are passed on (the caller
// ignores what it does not know, e.g. a future `approval` card).

import { request, enc, ApiError } from './api.js';

const RETRY_DELAYS_MS = [250, 1000, 2000, 4000, 8000];
const SLICE_MS = 8;

/** Split a byte stream into parsed JSON lines; bad lines are skipped, never fatal. */
async function* ndjson(response, signal) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      // Walk the lines by index and cut the buffer once: a burst (a replay) holds hundreds.
      let from = 0;
      let nl;
      while ((nl = buffer.indexOf('\n', from)) >= 0) {
        const line = buffer.slice(from, nl).trim();
        from = nl + 1;
        if (!line) continue;
        try {
          yield JSON.parse(line);
        } catch {
          // A torn or foreign line (a proxy's banner): skip it.
        }
      }
      buffer = buffer.slice(from);
      if (signal && signal.aborted) break;
    }
    const tail = (buffer + decoder.decode()).trim();
    if (tail) {
      try {
        yield JSON.parse(tail);
      } catch {
        // ignore
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * One turn being followed. `onEvent(event)` gets every new event in seq order (and pings
 * are dropped here); `onState(state)` hears 'connecting' | 'streaming' | 'reconnecting' | 'done'.
 * `run()` resolves when `done` arrived, or rejects with an ApiError it could not get past.
 */
export class TurnStream {
  constructor({ onEvent, onState = () => {} }) {
    this.onEvent = onEvent;
    this.onState = onState;
    this.turnId = null;
    this.lastSeq = 0;
    this.finished = false;
    this.controller = new AbortController();
  }

  /** Start a new turn on a session; resolves once `done` has been seen. */
  async start(sessionId, message) {
    this.onState('connecting');
    const response = await request('POST', '/api/sessions/' + enc(sessionId) + '/turns', {
      body: { message },
      raw: true,
      signal: this.controller.signal,
      headers: { Accept: 'application/x-ndjson' },
    });
    await this._consume(response);
    return this._follow();
  }

  /** Follow a turn already running (after a reload, in a second tab), from `afterSeq`. */
  async resume(turnId, afterSeq = 0) {
    this.turnId = turnId;
    this.lastSeq = afterSeq;
    return this._follow();
  }

  /** Stop reading (the turn goes on on the server). */
  close() {
    this.controller.abort();
  }

  async _follow() {
    let attempt = 0;
    while (!this.finished) {
      if (this.controller.signal.aborted) return;
      if (!this.turnId) throw new ApiError(0, 'stream', 'The stream ended before the turn started.');
      this.onState('reconnecting');
      const before = this.lastSeq;
      try {
        const response = await request('GET', '/api/turns/' + enc(this.turnId) + '/events?after=' + this.lastSeq, {
          raw: true,
          signal: this.controller.signal,
          headers: { Accept: 'application/x-ndjson' },
        });
        await this._consume(response);
      } catch (e) {
        if (e.name === 'AbortError') return;
        // 404: the server no longer knows the turn (restarted, or long finished): stop here.
        if (e instanceof ApiError && e.status !== 0 && e.status < 500 && e.status !== 429) throw e;
      }
      if (this.finished) break;
      attempt = this.lastSeq > before ? 0 : attempt + 1;
      if (attempt >= RETRY_DELAYS_MS.length) {
        throw new ApiError(0, 'stream', 'Lost the connection to the running turn.');
      }
      await sleep(RETRY_DELAYS_MS[attempt], this.controller.signal);
    }
    this.onState('done');
  }

  async _consume(response) {
    this.onState('streaming');
    const signal = this.controller.signal;
    let sliceStart = performance.now();
    try {
      for await (const event of ndjson(response, signal)) {
        // A burst of events (a replay, a fast local model) is handled in slices of a few
        // milliseconds, giving the browser a turn in between: no long task, whatever the burst.
        if (performance.now() - sliceStart > SLICE_MS) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          sliceStart = performance.now();
        }
        if (!event || typeof event !== 'object' || event.type === 'ping') continue;
        if (typeof event.seq === 'number') {
          if (event.seq <= this.lastSeq) continue;
          this.lastSeq = event.seq;
        }
        if (event.turn_id && !this.turnId) this.turnId = String(event.turn_id);
        if (event.type === 'done') this.finished = true;
        this.onEvent(event);
      }
    } catch (e) {
      if (e.name === 'AbortError' || signal.aborted) return;
      // A dropped connection mid-body: the caller resumes from lastSeq.
    }
  }
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    if (signal) signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

/** Ask the server to cancel a turn at its next safe point. */
export function cancelTurn(turnId) {
  return request('POST', '/api/turns/' + enc(turnId) + '/cancel', { body: {} });
}
