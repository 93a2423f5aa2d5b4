import type { ServerResponse } from 'node:http';
import { securityHeaders } from './http-util.js';

/** How often an idle event stream gets a comment line, so proxies and browsers keep it open. */
const KEEPALIVE_MS = 20_000;

/** The open Server-Sent Events streams of the page, and what is broadcast to them. */
export class SseHub {
  readonly #clients = new Set<ServerResponse>();
  #keepalive: ReturnType<typeof setInterval> | undefined;

  /** Opens an event stream on `res`; it stays open until the client leaves or {@link SseHub.close}. */
  open(res: ServerResponse): void {
    res.writeHead(200, {
      ...securityHeaders(),
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    res.write('retry: 2000\n: connected\n\n');
    this.#clients.add(res);
    res.on('close', () => this.#clients.delete(res));
    this.#keepalive ??= setInterval(() => {
      for (const client of this.#clients) client.write(': keepalive\n\n');
    }, KEEPALIVE_MS);
    this.#keepalive.unref();
  }

  /** Sends `data` (as JSON) as an event named `event` to every open stream. */
  broadcast(event: string, data: unknown): void {
    if (this.#clients.size === 0) return;
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const client of this.#clients) client.write(frame);
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
}
