// The live event stream's bounds, over real sockets: a client that stops reading is ended before
// the process buffers more than the cap for it, a client that reads keeps its stream, and no more
// than the limit of streams is ever open.
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EVENT_STREAM_RETRY_AFTER_SECONDS, SseHub } from '../src/sse-hub.js';

const KB = 1024;
const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const undo of cleanup.splice(0)) undo();
});

/** An HTTP server whose every request opens a stream of `hub`; resolves with its port and the server side of each stream. */
async function serve(hub: SseHub): Promise<{ port: number; responses: ServerResponse[] }> {
  const responses: ServerResponse[] = [];
  const server: Server = createServer((_req, res) => {
    responses.push(res);
    hub.open(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    hub.close();
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, responses };
}

/** A raw client: sends the request, and counts the bytes it reads. */
function client(port: number): Promise<{ socket: Socket; received: () => number; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n'));
    cleanup.push(() => socket.destroy());
    let received = 0;
    socket.on('error', () => undefined); // a stream the hub ends may reset the connection
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      if (received === 0) resolve({ socket, received: () => received, head: chunk.toString('latin1') });
      received += chunk.length;
    });
  });
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SseHub', () => {
  it('ends a stream whose client stopped reading once its unsent bytes would pass the cap, and never holds more', async () => {
    const cap = 256 * KB;
    const hub = new SseHub({ maxStreams: 4, maxBufferedBytes: cap });
    const { port, responses } = await serve(hub);
    const stalled = await client(port);
    stalled.socket.pause(); // a laptop gone to sleep: the socket stays open, nothing is read
    const [res] = responses;
    expect(hub.size).toBe(1);

    const payload = 'x'.repeat(16 * KB);
    let sent = 0;
    // Far more than the kernel's buffers and the cap together; today's hub would buffer it all.
    while (hub.size > 0 && sent < 64 * 1024 * KB) {
      hub.broadcast('entry', { payload });
      sent += payload.length;
      if (!res!.destroyed) expect(res!.writableLength).toBeLessThanOrEqual(cap);
      await turn(); // the socket hands what the kernel takes to it
    }
    expect(hub.size).toBe(0);
    expect(res!.destroyed).toBe(true);
    expect(sent).toBeGreaterThan(cap); // it was the cap, not the first frame, that ended it
    // The hub goes on serving: a new client gets a stream.
    await client(port);
    expect(hub.size).toBe(1);
  });

  it('keeps the stream of a client that reads, however much is sent', async () => {
    const cap = 64 * KB;
    const hub = new SseHub({ maxStreams: 4, maxBufferedBytes: cap });
    const { port } = await serve(hub);
    const reader = await client(port);
    const payload = 'y'.repeat(8 * KB);
    const start = reader.received();
    for (let i = 0; i < 256; i++) {
      const before = reader.received();
      hub.broadcast('entry', { payload });
      while (reader.received() < before + payload.length) await turn();
    }
    expect(reader.received() - start).toBeGreaterThan(32 * cap);
    expect(hub.size).toBe(1);
  });

  it('opens at most maxStreams streams; one more is answered 503 with Retry-After', async () => {
    const hub = new SseHub({ maxStreams: 3, maxBufferedBytes: 64 * KB });
    const { port } = await serve(hub);
    const clients = await Promise.all(Array.from({ length: 8 }, () => client(port)));
    const heads = clients.map((c) => c.head);
    expect(heads.filter((h) => h.startsWith('HTTP/1.1 200'))).toHaveLength(3);
    const refused = heads.filter((h) => h.startsWith('HTTP/1.1 503'));
    expect(refused).toHaveLength(5);
    for (const head of refused) {
      expect(head.toLowerCase()).toContain(`retry-after: ${EVENT_STREAM_RETRY_AFTER_SECONDS}\r\n`);
      expect(head).toContain('"code":"too_many_streams"');
    }
    expect(hub.size).toBe(3);

    // When a stream closes, its place is free again.
    clients.find((c) => c.head.startsWith('HTTP/1.1 200'))!.socket.destroy();
    await expect.poll(() => hub.size).toBe(2);
    expect((await client(port)).head).toMatch(/^HTTP\/1\.1 200/);
    expect(hub.size).toBe(3);
  });
});
