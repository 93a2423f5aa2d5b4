import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeValue, type CheckpointStore } from '@signalyard/core';
import { abortedError, errorCode, errorText, onAbort } from '@signalyard/core/internal';
import { AccessGuard } from './access-guard.js';
import { InspectorError } from './errors/inspector-error.js';
import { DiagramSource } from './diagrams.js';
import { EventLog } from './event-log.js';
import { HttpProblem, readJsonBody, send, sendJson, sendProblem } from './http-util.js';
import { InspectorApi, problemOf } from './inspector-api.js';
import { resolveInspectorOptions, type InspectorOptions, type ResolvedInspectorOptions } from './inspector-options.js';
import { RunnerTimelineFeed, type TimelineFeed } from './runner-timeline.js';
import { sameOriginPath } from './same-origin-path.js';
import { RunnerSource, type SessionSource } from './session-source.js';
import { SseHub } from './sse-hub.js';
import { StaticAssets } from './static-assets.js';
import { StoreSource } from './store-source.js';

/** A running inspector. */
export interface Inspector {
  /** The page's address, token included (`http://127.0.0.1:4319/?token=…`): open it in a browser. */
  readonly url: string;
  /** The token every request needs. */
  readonly token: string;
  /**
   * Closes the server and its event streams (idempotent). Never closes the runner or the
   * store it was given.
   */
  close(): Promise<void>;
}

/** The live sessions' timelines keep the most recently active this many sessions. */
const MAX_LOGGED_SESSIONS = 1000;

/**
 * Starts the inspector: a local web page over a live runner (sessions, each signal's route
 * decision, FSM transitions, handoffs, tool calls, approvals with Approve / Deny, outcomes with
 * durations, live through Server-Sent Events) or over a checkpoint store alone (offline and
 * read-only: sessions, their versions and each version's `cause`).
 *
 * Over a runner, it subscribes with `on(listener, { explainDecisions: true })`, so every route
 * decision shows the routes it beat while the inspector is attached; reads the runner's
 * `timeline()` (a page opened mid-run catches up) and `describe()` (the agents' diagrams) when
 * the runner has them.
 *
 * Listens on `127.0.0.1:4319` by default. Every request needs the token (`inspector.url`
 * carries it once; the page then keeps it in an `HttpOnly`, `SameSite=Strict` cookie named
 * after the port); requests without it get 401, requests with a `Host` header outside
 * `allowedHosts` get 403. Approve, fork and rewind are `POST`s, refused offline. The token's
 * redirect stays on the inspector's own paths. Live event streams are bounded: a page that stops
 * reading is disconnected before its unsent bytes pass `maxEventStreamBytes` (it reconnects and
 * catches up), and beyond `maxEventStreams` open streams one more gets 503 with `Retry-After`.
 *
 * @throws InspectorError `INSPECTOR_OPTIONS_INVALID` (every bad option listed),
 * `INSPECTOR_LISTEN_FAILED` (the port is taken, …); AbortedError when `abortSignal` has
 * already fired. Nothing is left running when it rejects.
 * @example
 * ```ts
 * const runner = createRunner({ agents, store });
 * const inspector = await startInspector({ runner }); // diagrams from runner.describe()
 * console.log(`inspector: ${inspector.url}`);
 * // …
 * await inspector.close(); // the runner keeps running
 * ```
 */
export async function startInspector(opts: InspectorOptions): Promise<Inspector> {
  const o = resolveInspectorOptions(opts);
  if (o.abortSignal?.aborted === true) throw abortedError(o.abortSignal, 'The inspector was aborted before it started');
  const server = createServer();
  const port = await listen(server, o);
  const guard = new AccessGuard({ token: o.token, port, allowedHosts: o.allowedHosts ?? defaultHosts(o.host, port) });
  const log = timelineFeed(o);
  const hub = new SseHub({ maxStreams: o.maxEventStreams, maxBufferedBytes: o.maxEventStreamBytes });
  const source: SessionSource =
    o.runner !== undefined ? new RunnerSource(o.runner) : new StoreSource(o.store as CheckpointStore);
  const describe = o.runner?.describe?.bind(o.runner);
  const diagrams = new DiagramSource(o.diagrams, describe);
  const api = new InspectorApi({
    source,
    runner: o.runner,
    log,
    diagrams,
    by: o.by,
    inbox: o.inbox,
    replayReport: o.replayReport,
  });
  const assets = new StaticAssets();
  // Asks the runner for explained decisions (the routes each one beat) while attached.
  const unsubscribe =
    o.runner?.on(
      (event) => {
        const entry = log.add(event);
        if (entry !== undefined) hub.broadcast('entry', entry);
      },
      { explainDecisions: true },
    ) ?? noop;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void handle(req, res, { guard, api, hub, assets }).catch((error: unknown) => {
      if (!res.headersSent) sendProblem(res, problemOf(error));
      else res.destroy();
    });
  });

  let closing: Promise<void> | undefined;
  let stopAbort = noop;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stopAbort();
      unsubscribe();
      hub.close();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      });
    })();
    return closing;
  };
  if (o.abortSignal !== undefined) stopAbort = onAbort(o.abortSignal, () => void close());
  return { url: `http://${urlHost(o.host)}:${port}/?token=${o.token}`, token: o.token, close };
}

/** The runner's own log when it has `timeline()`, else the inspector's, from now on. */
function timelineFeed(o: ResolvedInspectorOptions): TimelineFeed {
  const runner = o.runner;
  if (runner?.timeline !== undefined)
    return new RunnerTimelineFeed((key, opts) => runner.timeline?.(key, opts) ?? [], o.timelineLimit);
  return new EventLog({ limit: o.timelineLimit, maxSessions: MAX_LOGGED_SESSIONS, clock: o.clock });
}

function noop(): void {
  // nothing to undo
}

/** Listens; resolves with the port. @throws InspectorError `INSPECTOR_LISTEN_FAILED`. */
function listen(server: Server, o: ResolvedInspectorOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error) => {
      server.close();
      const code = errorCode(error);
      const why =
        code === 'EADDRINUSE' ? 'the port is in use (pass another port, or 0 for any free one)' : errorText(error);
      reject(
        new InspectorError({
          code: 'INSPECTOR_LISTEN_FAILED',
          message: `The inspector cannot listen on ${describeValue(o.host)} port ${o.port}: ${why}`,
          cause: error,
        }),
      );
    });
    server.listen({ port: o.port, host: o.host }, () => {
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** The loopback names with the port, and the listening host when it is a specific address. */
function defaultHosts(host: string, port: number): string[] {
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  if (!isWildcard(host)) hosts.push(`${urlHost(host)}:${port}`);
  return hosts;
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

function urlHost(host: string): string {
  if (isWildcard(host)) return '127.0.0.1';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

interface Handlers {
  readonly guard: AccessGuard;
  readonly api: InspectorApi;
  readonly hub: SseHub;
  readonly assets: StaticAssets;
}

/** One request: the access rules first, then the page's files, the event stream or the API. */
async function handle(req: IncomingMessage, res: ServerResponse, h: Handlers): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://inspector.invalid');
  let access;
  try {
    access = h.guard.check(req, url);
  } catch (error) {
    sendProblem(res, problemOf(error));
    return;
  }
  const cookie: Record<string, string> = access.fromQuery ? { 'set-cookie': h.guard.cookie() } : {};
  if (access.fromQuery && req.method === 'GET' && !url.pathname.startsWith('/api/')) {
    // Keep the token out of the address bar, history and any later copy of the URL.
    url.searchParams.delete('token');
    send(res, 303, '', { ...cookie, location: sameOriginPath(url) });
    return;
  }
  if (req.method === 'GET' && h.assets.has(url.pathname)) {
    const asset = await h.assets.get(url.pathname);
    if (asset === undefined) throw new HttpProblem(404, 'not_found', `${url.pathname} is not in this installation`);
    send(res, 200, asset.body, { ...cookie, 'content-type': asset.type });
    return;
  }
  if (req.method === 'GET' && url.pathname === '/api/events') {
    h.hub.open(res);
    return;
  }
  const body = await route(req, url, h.api);
  res.setHeader('set-cookie', cookie['set-cookie'] ?? []);
  sendJson(res, 200, body);
}

/** The API call `req` names. @throws HttpProblem 404 / 405 for anything else. */
async function route(req: IncomingMessage, url: URL, api: InspectorApi): Promise<unknown> {
  const gets: Record<string, (url: URL) => unknown> = {
    '/api/info': () => api.info(),
    '/api/sessions': (u) => api.sessions(u),
    '/api/session': (u) => api.session(u),
    '/api/history': (u) => api.history(u),
    '/api/timeline': (u) => api.timeline(u),
    '/api/inbox': (u) => api.inbox(u),
    '/api/inbox/overview': () => api.inboxOverview(),
    '/api/replay': () => api.replay(),
  };
  const posts: Record<string, (body: Record<string, unknown>) => Promise<unknown>> = {
    '/api/approve': (b) => api.approve(b),
    '/api/fork': (b) => api.fork(b),
    '/api/rewind': (b) => api.rewind(b),
  };
  const get = Object.hasOwn(gets, url.pathname) ? gets[url.pathname] : undefined;
  const post = Object.hasOwn(posts, url.pathname) ? posts[url.pathname] : undefined;
  if (req.method === 'GET' && get !== undefined) return get(url);
  if (req.method === 'POST' && post !== undefined) return post(await readJsonBody(req));
  if (get !== undefined || post !== undefined) {
    throw new HttpProblem(
      405,
      'method_not_allowed',
      `${url.pathname} takes ${get !== undefined ? 'GET' : 'POST'}, not ${req.method ?? '?'}`,
    );
  }
  throw new HttpProblem(404, 'not_found', `no such page or API: ${url.pathname}`);
}
