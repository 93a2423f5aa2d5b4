import type { ServerResponse } from 'node:http';
import { securityHeaders, send } from './http-util.js';

/** How often an idle event stream gets a comment line, so proxies and browsers keep it open. */
const KEEPALIVE_MS = 20_000;

/** How long a client refused for too many open streams is told to wait (`Retry-After`, seconds). */
export const EVENT_STREAM_RETRY_AFTER_SECONDS = 2;

/** The bounds of a {@link SseHub}. */
export interface SseHubLimits {
  /** Open streams at most; one more is answered 503 with `Retry-After`. */
  readonly maxStreams: number;
  /**
   * Bytes a stream may have waiting to be sent (its `writableLength`). A frame that would take a
   * stream past this ends the stream instead: its client stopped reading (a laptop asleep, a dead
   * network), and the page reconnects and catches up when it reads again.
   */
  readonly maxBufferedBytes: number;
}

/**
 * The open Server-Sent Events streams of the page, and what is broadcast to them. Bounded: at
 * most `maxStreams` streams, each holding at most `maxBufferedBytes` unsent bytes, so a client
 * that stops reading never makes the process buffer every event.
 */
export class SseHub {
  readonly #clients = new Set<ServerResponse>();
  readonly #limits: SseHubLimits;
  #keepalive: ReturnType<typeof setInterval> | undefined;

  constructor(limits: SseHubLimits) {
    this.#limits = limits;
  }

  /**
   * Opens an event stream on `res`; it stays open until the client leaves, falls too far behind,
   * or {@link SseHub.close}. With `maxStreams` already open, answers 503 with `Retry-After`.
   */
  open(res: ServerResponse): void {
    if (this.#clients.size >= this.#limits.maxStreams) {
      const message = `${this.#limits.maxStreams} event streams are open (the most this inspector serves): retry in ${EVENT_STREAM_RETRY_AFTER_SECONDS} s`;
      send(res, 503, JSON.stringify({ error: { code: 'too_many_streams', message } }), {
        'content-type': 'application/json; charset=utf-8',
        'retry-after': String(EVENT_STREAM_RETRY_AFTER_SECONDS),
      });
      return;
    }
    res.writeHead(200, {
      ...securityHeaders(),
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    res.write('retry: 2000\n: connected\n\n');
    this.#clients.add(res);
    res.on('close', () => this.#clients.delete(res));
    this.#keepalive ??= setInterval(() => {
      this.#sendAll(': keepalive\n\n');
    }, KEEPALIVE_MS);
    this.#keepalive.unref();
  }

  /** Sends `data` (as JSON) as an event named `event` to every open stream. */
  broadcast(event: string, data: unknown): void {
    if (this.#clients.size === 0) return;
    this.#sendAll(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** How many streams are open. */
  get size(): number {
    return this.#clients.size;
  }

  /** Ends every stream. */
  close(): void {
    clearInterval(this.#keepalive);
    this.#keepalive = undefined;
    for (const client of this.#clients) client.end();
    this.#clients.clear();
  }

  #sendAll(frame: string): void {
    const bytes = Buffer.byteLength(frame);
    for (const client of this.#clients) {
      const waiting = client.writableLength;
      if (waiting > 0 && waiting + bytes > this.#limits.maxBufferedBytes) {
        // The client stopped reading: let its buffer go rather than the process's memory.
        this.#clients.delete(client);
        client.destroy();
      } else {
        client.write(frame);
      }
    }
  }
}
