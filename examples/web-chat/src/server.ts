// The web chat's HTTP server (node:http): the built page, and the chat API the AI SDK's
// `DefaultChatTransport` talks to.
//
//   POST /api/chat                 { id, messages } → the UI message stream of the turn:
//                                  a new user message → runner.stream(...);
//                                  approval answers   → runner.streamApprove(...), continuing
//                                                       the same assistant message
//   GET  /api/chat/:id/messages    the conversation so far, for a page (re)load
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { approvalsFromUIMessages, toUIMessageStreamResponse, transcriptToUIMessages } from '@signalyard/ai-sdk';
import type { UIMessage } from 'ai';
import type { Runner } from 'signalyard';
import { sessionKeyOf } from './desk.js';

/** Where `vite build` puts the page. */
const PAGE_DIR = fileURLToPath(new URL('../dist/page', import.meta.url));

/** Options of {@link startWebChat}. */
export interface WebChatOptions {
  /** The desk's runner (see deskRunner). */
  readonly runner: Runner;
  /** The port (0: any free one). Default 4320. */
  readonly port?: number;
  /** The host to listen on. Default 127.0.0.1. */
  readonly host?: string;
  /** The built page. Default dist/page. */
  readonly pageDir?: string;
}

/** A running web chat. */
export interface WebChat {
  /** The page's address. */
  readonly url: string;
  /** Stops the server (the runner stays open: its owner closes it). */
  close(): Promise<void>;
}

const CHAT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_BODY = 1 << 20;
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Starts the web chat's server over `runner`. */
export async function startWebChat(opts: WebChatOptions): Promise<WebChat> {
  const pageDir = opts.pageDir ?? PAGE_DIR;
  const server = createServer((req, res) => {
    handle(opts.runner, pageDir, req, res).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      const message = error instanceof Error ? error.message : String(error);
      if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: message }));
    });
  });
  await listen(server, opts.port ?? 4320, opts.host ?? '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}/`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => {
          if (error === undefined) resolve();
          else reject(error);
        });
      }),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function handle(runner: Runner, pageDir: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/api/chat' && req.method === 'POST') {
    // A client that goes away stops reading; the turn still runs to its end and is saved, so a
    // reload shows it.
    await send(res, chat(runner, await readJson(req)));
    return;
  }
  const transcript = /^\/api\/chat\/([^/]+)\/messages$/.exec(url.pathname);
  if (transcript !== null && req.method === 'GET') {
    const chatId = checkChatId(decodeURIComponent(transcript[1] ?? ''));
    const messages = transcriptToUIMessages(await runner.transcript(sessionKeyOf(chatId)));
    await send(res, Response.json(messages, { headers: { 'cache-control': 'no-store' } }));
    return;
  }
  if (req.method === 'GET' || req.method === 'HEAD') {
    servePage(pageDir, url.pathname, res);
    return;
  }
  throw new HttpError(404, `No route ${req.method ?? '?'} ${url.pathname}`);
}

/** The turn a POST /api/chat asks for, as the AI SDK's UI message stream. */
function chat(runner: Runner, body: unknown): Response {
  const { id, messages } = (body ?? {}) as { id?: unknown; messages?: unknown };
  const chatId = checkChatId(id);
  if (!Array.isArray(messages) || messages.length === 0) throw new HttpError(400, 'Expected { id, messages: [...] }');
  const list = messages as UIMessage[];
  const last = list.at(-1);
  if (last?.role === 'user') {
    const text = last.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
    if (text.trim() === '') throw new HttpError(400, 'The last user message has no text');
    return toUIMessageStreamResponse(runner.stream({ channel: 'web', peer: { kind: 'dm', id: chatId }, text }));
  }
  // The person answered approval requests (addToolApprovalResponse): resume the paused turn and
  // stream the rest into the same assistant message.
  const decisions = approvalsFromUIMessages(list);
  if (decisions.length === 0 || last === undefined) {
    throw new HttpError(400, 'Expected a new user message or answers to approval requests');
  }
  return toUIMessageStreamResponse(runner.streamApprove(sessionKeyOf(chatId), decisions, { by: `web:${chatId}` }), {
    messageId: last.id,
  });
}

function checkChatId(id: unknown): string {
  if (typeof id !== 'string' || !CHAT_ID.test(id)) {
    throw new HttpError(400, `Expected a chat id of 1 to 64 letters, digits, - or _, got ${JSON.stringify(id)}`);
  }
  return id;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, 'Request body too large');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'Expected a JSON body');
  }
}

/** Writes a fetch `Response` to a node response, streaming its body; stops reading when the client goes away. */
async function send(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.on('close', () => {
    if (!res.writableFinished) void reader.cancel();
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

function servePage(pageDir: string, pathname: string, res: ServerResponse): void {
  if (!existsSync(join(pageDir, 'index.html'))) {
    throw new HttpError(
      503,
      'The page is not built: run `pnpm --filter @signalyard-examples/web-chat build` (start does it for you)',
    );
  }
  const file = normalize(join(pageDir, pathname === '/' ? 'index.html' : decodeURIComponent(pathname)));
  if (!file.startsWith(pageDir + sep) || !existsSync(file) || !statSync(file).isFile()) {
    throw new HttpError(404, `No file ${pathname}`);
  }
  res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
  createReadStream(file).pipe(res);
}
