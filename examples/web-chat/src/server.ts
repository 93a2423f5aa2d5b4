// The web chat's HTTP server (node:http): the built pages, the chat API the AI SDK's
// `DefaultChatTransport` talks to, and the reviewer's API.
//
//   GET  /                          the customer's chat page
//   GET  /review#token=…            the reviewer's page: pending approvals, Approve / Deny
//   POST /api/chat                  { id, messages } → the UI message stream of the turn of the
//                                   new user message (runner.stream); answers to approval
//                                   requests are refused: a reviewer decides them
//   GET  /api/chat/:id/messages     the conversation so far, for a page (re)load
//   GET  /api/chat/:id/stream       the chat's reply in flight, replayed from its start then live
//                                   (the AI SDK's resume: resumeUIMessageStreamResponse), or 204
//   GET  /api/review/pending        (reviewer token) every chat's pending approvals
//   POST /api/review/decisions      (reviewer token) { chatId, decisions } → runner.approve
//
// Every request's Host must be an allowed one (DNS rebinding); a POST must be JSON and must not
// come from another site's page; request bodies are checked with zod (chat-request.ts).
import { randomBytes } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resumeUIMessageStreamResponse, toUIMessageStreamResponse, transcriptToUIMessages } from '@signalyard/ai-sdk';
import type { Runner } from 'signalyard';
import { chatIdSchema, readChatRequest } from './chat-request.js';
import { sessionKeyOf } from './desk.js';
import {
  HttpError,
  checkRequest,
  decodePathPart,
  loopbackHosts,
  readJson,
  sendFailure,
  sendResponse,
} from './http-rules.js';
import { ReviewDesk } from './review-desk.js';

/** Where `vite build` puts the pages. */
const PAGE_DIR = fileURLToPath(new URL('../dist/page', import.meta.url));

/** Options of {@link startWebChat}. */
export interface WebChatOptions {
  /** The desk's runner (see deskRunner). */
  readonly runner: Runner;
  /** The port (0: any free one). Default 4320. */
  readonly port?: number;
  /** The host to listen on. Default 127.0.0.1. */
  readonly host?: string;
  /** The built pages. Default dist/page. */
  readonly pageDir?: string;
  /** `Host` header values accepted. Default the loopback names with the port (`127.0.0.1:4320`, `localhost:4320`, `[::1]:4320`). */
  readonly allowedHosts?: readonly string[];
  /** The reviewer's secret (the reviewer page's address carries it). Default 32 random hex characters. */
  readonly reviewerToken?: string;
  /**
   * Whether a reply in flight can be resumed (`GET /api/chat/:id/stream`): true when `runner` has
   * a durable inbox (`--workers N`), whose stream logs `runner.resumeStream` reads. Default
   * false: the route answers 204 (nothing to resume), as the page expects.
   */
  readonly resumable?: boolean;
}

/** A running web chat. */
export interface WebChat {
  /** The customer's page. */
  readonly url: string;
  /** The reviewer's page, token included (`…/review#token=…`): for the person who approves refunds. */
  readonly reviewUrl: string;
  /** Stops the server (the runner stays open: its owner closes it). */
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The pages, by path. */
const PAGES: Readonly<Record<string, string>> = { '/': 'index.html', '/review': 'review.html' };

interface Handlers {
  readonly runner: Runner;
  readonly resumable: boolean;
  readonly pageDir: string;
  readonly hosts: ReadonlySet<string>;
  readonly review: ReviewDesk;
}

/** Starts the web chat's server over `runner`. */
export async function startWebChat(opts: WebChatOptions): Promise<WebChat> {
  const pageDir = opts.pageDir ?? PAGE_DIR;
  const host = opts.host ?? '127.0.0.1';
  const token = opts.reviewerToken ?? randomBytes(16).toString('hex');
  const handlers = {
    runner: opts.runner,
    resumable: opts.resumable ?? false,
    pageDir,
    review: new ReviewDesk(opts.runner, token),
  };
  let hosts: ReadonlySet<string> = new Set();
  const server = createServer((req, res) => {
    handle({ ...handlers, hosts }, req, res).catch((error: unknown) => {
      sendFailure(res, error);
    });
  });
  await listen(server, opts.port ?? 4320, host);
  const { port } = server.address() as AddressInfo;
  hosts = new Set((opts.allowedHosts ?? loopbackHosts(port, host)).map((h) => h.toLowerCase()));
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
  return {
    url,
    reviewUrl: `${url}review#token=${token}`,
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

async function handle(h: Handlers, req: IncomingMessage, res: ServerResponse): Promise<void> {
  checkRequest(req, h.hosts);
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/api/chat' && req.method === 'POST') {
    await chat(h.runner, await readJson(req), res);
    return;
  }
  const chatRoute = /^\/api\/chat\/([^/]+)\/(messages|stream)$/.exec(url.pathname);
  if (chatRoute !== null && req.method === 'GET') {
    const parsed = chatIdSchema.safeParse(decodePathPart(chatRoute[1] ?? '', 'chat id'));
    if (!parsed.success) throw new HttpError(400, `Invalid chat id: ${parsed.error.issues[0]?.message ?? ''}`);
    const sessionKey = sessionKeyOf(parsed.data);
    const noStore = { 'cache-control': 'no-store' };
    if (chatRoute[2] === 'stream') {
      // The AI SDK's resume (the page calls it on load and after an interrupted reply): the
      // reply in flight replayed from the start of its latest attempt, or 204.
      const response = h.resumable
        ? await resumeUIMessageStreamResponse(h.runner, sessionKey, { headers: noStore })
        : new Response(null, { status: 204, headers: noStore });
      await sendResponse(res, response);
      return;
    }
    const messages = transcriptToUIMessages(await h.runner.transcript(sessionKey));
    await sendResponse(res, Response.json(messages, { headers: noStore }));
    return;
  }
  if (url.pathname.startsWith('/api/review/')) {
    h.review.authorize(req);
    if (url.pathname === '/api/review/pending' && req.method === 'GET') {
      await sendResponse(res, Response.json(await h.review.pending(), { headers: { 'cache-control': 'no-store' } }));
      return;
    }
    if (url.pathname === '/api/review/decisions' && req.method === 'POST') {
      await sendResponse(res, Response.json(await h.review.decide(await readJson(req))));
      return;
    }
  }
  if (!url.pathname.startsWith('/api/') && (req.method === 'GET' || req.method === 'HEAD')) {
    servePage(h.pageDir, url.pathname, res);
    return;
  }
  throw new HttpError(404, `No route ${req.method ?? '?'} ${url.pathname}`);
}

/** The turn a POST /api/chat asks for, as the AI SDK's UI message stream. */
async function chat(runner: Runner, body: unknown, res: ServerResponse): Promise<void> {
  const request = readChatRequest(body);
  if (request.kind === 'approval_answers') {
    throw new HttpError(
      403,
      'Approvals are given by a reviewer on the reviewer page, not from the chat: the refund waits for them',
    );
  }
  // A client that goes away stops reading; the turn still runs to its end and is saved, so a
  // reload shows it.
  const turn = runner.stream({ channel: 'web', peer: { kind: 'dm', id: request.chatId }, text: request.text });
  await sendResponse(res, toUIMessageStreamResponse(turn));
}

function servePage(pageDir: string, pathname: string, res: ServerResponse): void {
  if (!existsSync(join(pageDir, 'index.html'))) {
    throw new HttpError(
      503,
      'The page is not built: run `pnpm --filter @signalyard-examples/web-chat build` (start does it for you)',
    );
  }
  const name = Object.hasOwn(PAGES, pathname) ? PAGES[pathname] : decodePathPart(pathname, 'file');
  const file = normalize(join(pageDir, name ?? ''));
  if (!file.startsWith(pageDir + sep) || !existsSync(file) || !statSync(file).isFile()) {
    throw new HttpError(404, `No file ${pathname}`);
  }
  res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
  createReadStream(file).pipe(res);
}
