// The page's live event stream: Server-Sent Events read over fetch rather than EventSource, which
// gives up at a 503 without saying why and cannot read its Retry-After. It reconnects whenever
// the stream ends (the inspector ends a stream whose page stopped reading), waits as long as a
// 503's Retry-After says when too many pages are open, and stops at an answer retrying cannot
// change (401: the token is gone). No DOM: the tests run it in Node.

/** How long to wait before reconnecting when the server said nothing else (its `retry:` field wins). */
const DEFAULT_RETRY_MS = 2000;
/** The longest wait a Retry-After may ask for. */
const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Reads Server-Sent Events from text chunks: any line ending, `data` lines joined, comments skipped. */
class SseParser {
  #buffer = '';
  #event = '';
  #data = [];
  /** The last `retry:` the server sent, in milliseconds. */
  retryMs = undefined;

  /** The events completed by `text`, as `{ event, data }`. */
  push(text) {
    let buffer = this.#buffer + text;
    // A CR at the end may be the first half of a CRLF: keep it for the next chunk.
    const held = buffer.endsWith('\r') ? '\r' : '';
    if (held !== '') buffer = buffer.slice(0, -1);
    const lines = buffer.split(/\r\n|\r|\n/);
    this.#buffer = lines.pop() + held;
    const events = [];
    for (const line of lines) {
      const event = this.#line(line);
      if (event !== undefined) events.push(event);
    }
    return events;
  }

  #line(line) {
    if (line === '') {
      const event =
        this.#data.length === 0 ? undefined : { event: this.#event || 'message', data: this.#data.join('\n') };
      this.#event = '';
      this.#data = [];
      return event;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') this.#event = value;
    else if (field === 'data') this.#data.push(value);
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    return undefined;
  }
}

/** A Retry-After header's seconds in milliseconds (`undefined` when it is not a number of seconds). */
function retryAfterMs(header) {
  if (header === null || !/^\s*\d+\s*$/.test(header)) return undefined;
  return Math.min(Number(header) * 1000, MAX_RETRY_AFTER_MS);
}

function delay(ms, abortSignal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    abortSignal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

async function read(body, parser, onEvent) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
    for (const { event, data } of parser.push(text)) onEvent(event, data);
    if (done) return;
  }
}

/**
 * Opens the event stream at `url` and keeps it open: `onEvent(name, data)` per event,
 * `onOpen({ reconnected })` each time the stream opens — `reconnected` unless it opened at the
 * first attempt: the page may have missed events meanwhile and catches up — and `onState(s)` as it goes: `{ state: 'connected' }`, `{ state: 'reconnecting',
 * retryMs }`, `{ state: 'waiting', retryMs }` (503: too many pages), `{ state: 'refused', status }`
 * (401, 403, …: it stops). Returns `{ close() }`.
 */
export function connectEventStream({ url, onEvent, onOpen, onState, fetch: fetchFn }) {
  const controller = new AbortController();
  const doFetch = fetchFn ?? ((...args) => fetch(...args));
  void run({ url, onEvent, onOpen, onState, doFetch }, controller.signal);
  return { close: () => controller.abort() };
}

async function run({ url, onEvent, onOpen, onState, doFetch }, abortSignal) {
  let retryMs = DEFAULT_RETRY_MS;
  let first = true;
  while (!abortSignal.aborted) {
    let waitMs = retryMs;
    const reconnected = !first;
    first = false;
    try {
      const res = await doFetch(url, {
        credentials: 'same-origin',
        headers: { accept: 'text/event-stream' },
        signal: abortSignal,
      });
      if (res.ok && res.body !== null) {
        onState?.({ state: 'connected' });
        onOpen?.({ reconnected });
        const parser = new SseParser();
        await read(res.body, parser, onEvent);
        retryMs = parser.retryMs ?? retryMs;
        waitMs = retryMs;
        onState?.({ state: 'reconnecting', retryMs });
      } else if (res.status === 503 || res.status >= 500) {
        await res.body?.cancel();
        waitMs = (res.status === 503 ? retryAfterMs(res.headers.get('retry-after')) : undefined) ?? retryMs;
        onState?.({ state: res.status === 503 ? 'waiting' : 'reconnecting', retryMs: waitMs });
      } else {
        await res.body?.cancel();
        onState?.({ state: 'refused', status: res.status });
        return;
      }
    } catch {
      if (abortSignal.aborted) return;
      onState?.({ state: 'reconnecting', retryMs });
    }
    await delay(waitMs, abortSignal);
  }
}
