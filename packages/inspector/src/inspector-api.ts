import { isSignalyardError, type ApprovalDecision } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import { diagramsFor, type DiagramSource } from './diagrams.js';
import { HttpProblem } from './http-util.js';
import { inboxOverview, sessionInbox, type InspectorInbox } from './inspector-inbox.js';
import { readReplayReport } from './replay-report.js';
import type { InspectableRunner } from './inspectable-runner.js';
import type { TimelineFeed } from './runner-timeline.js';
import type { SessionSource } from './session-source.js';

/** What the API works with. */
export interface ApiDeps {
  readonly source: SessionSource;
  /** Present when live. */
  readonly runner: InspectableRunner | undefined;
  /** The live timeline: the runner's own log, or the inspector's. */
  readonly log: TimelineFeed;
  readonly diagrams: DiagramSource;
  readonly by: string;
  /** Present when the inspector was given the workers' inbox. */
  readonly inbox: InspectorInbox | undefined;
  /** The replay report file, when given. */
  readonly replayReport: string | undefined;
}

const MAX_KEY = 1000;
const NOT_FOUND_CODES: ReadonlySet<string> = new Set(['SESSION_NOT_FOUND', 'VERSION_UNAVAILABLE']);
const CONFLICT_CODES: ReadonlySet<string> = new Set(['SESSION_EXISTS', 'CHECKPOINT_CONFLICT']);
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set(['RUNNER_CLOSED', 'INBOX_UNAVAILABLE', 'INBOX_CLOSED']);

/** The JSON endpoints of the page. Each returns the response body or throws an {@link HttpProblem}. */
export class InspectorApi {
  readonly #d: ApiDeps;

  constructor(deps: ApiDeps) {
    this.#d = deps;
  }

  /** `GET /api/info`: live or offline, and which actions the page may offer. */
  info(): unknown {
    const r = this.#d.runner;
    return {
      mode: this.#d.source.live ? 'live' : 'offline',
      actions: {
        approve: r?.approve !== undefined,
        fork: r?.fork !== undefined,
        rewind: r?.rewind !== undefined,
      },
      by: this.#d.by,
      inbox: this.#d.inbox !== undefined,
      replay: this.#d.replayReport !== undefined,
    };
  }

  /** `GET /api/replay`: the replay report file, read now (404 without one; 422 when it is not a report). */
  async replay(): Promise<unknown> {
    return readReplayReport(this.#d.replayReport);
  }

  /** `GET /api/inbox?key=`: the session's entries waiting in the inbox and the lease holding it (404 without an inbox). */
  async inbox(url: URL): Promise<unknown> {
    const key = keyParam(url, 'key');
    try {
      return await sessionInbox(this.#d.inbox, key);
    } catch (error) {
      throw problemOf(error);
    }
  }

  /** `GET /api/inbox/overview`: sessions with entries waiting, the leases and the dead letters (404 without an inbox). */
  async inboxOverview(): Promise<unknown> {
    try {
      return await inboxOverview(this.#d.inbox);
    } catch (error) {
      throw problemOf(error);
    }
  }

  /** `GET /api/sessions?prefix=&after=&limit=` (limit 1–500, default 100). */
  async sessions(url: URL): Promise<unknown> {
    const prefix = url.searchParams.get('prefix') ?? undefined;
    const after = url.searchParams.get('after') ?? undefined;
    const limit = intParam(url, 'limit', 1, 500) ?? 100;
    const sessions = await this.#d.source.listSessions({
      ...(prefix !== undefined && prefix !== '' && { prefix }),
      ...(after !== undefined && { after }),
      limit,
    });
    return { sessions };
  }

  /** `GET /api/session?key=&version=`: the session (or a version of it) and its agent's diagrams. */
  async session(url: URL): Promise<unknown> {
    const key = keyParam(url, 'key');
    const version = intParam(url, 'version', 1);
    const session = await this.#d.source.session(key, version);
    if (session === undefined) {
      throw new HttpProblem(
        404,
        'not_found',
        version === undefined
          ? `session ${JSON.stringify(key)} does not exist`
          : `version ${version} of session ${JSON.stringify(key)} is not available`,
      );
    }
    const current = session.strategy.type === 'fsm' ? session.strategy.current_state : undefined;
    const diagrams = diagramsFor(
      this.#d.diagrams.get(session.agentId),
      typeof current === 'string' ? current : undefined,
    );
    return { session, diagrams };
  }

  /** `GET /api/history?key=&before=&limit=` (limit 1–500, default 50): the kept versions, newest first. */
  async history(url: URL): Promise<unknown> {
    const key = keyParam(url, 'key');
    const before = intParam(url, 'before', 1);
    const limit = intParam(url, 'limit', 1, 500) ?? 50;
    const versions = await this.#d.source.history(key, { ...(before !== undefined && { before }), limit });
    return { versions };
  }

  /**
   * `GET /api/timeline?key=`: the session's recent events, newest first — from the runner's log
   * when it has `timeline()` (`source: 'runner'`: including what happened before the inspector
   * started), else the events the inspector saw (`source: 'inspector'`); offline, none
   * (`source: 'store'`: the page shows the versions' causes).
   */
  timeline(url: URL): unknown {
    const key = keyParam(url, 'key');
    const runner = this.#d.runner;
    const source = runner === undefined ? 'store' : runner.timeline === undefined ? 'inspector' : 'runner';
    let entries;
    try {
      entries = this.#d.log.entries(key);
    } catch (error) {
      throw problemOf(error);
    }
    return { live: this.#d.source.live, source, entries };
  }

  /** `POST /api/approve` `{ sessionKey, decisions: [{ id, approved, reason? }] }`: `runner.approve(…, { by })`. */
  async approve(body: Record<string, unknown>): Promise<unknown> {
    const approve = this.#mutable('approve');
    const key = keyField(body, 'sessionKey');
    const decisions = decisionsField(body.decisions);
    const outcome = await callRunner(() => approve(key, decisions, { by: this.#d.by }));
    return { outcome: { status: outcome.status, sessionKey: outcome.sessionKey } };
  }

  /** `POST /api/fork` `{ from, to, version? }`: `runner.fork(from, to, { version })`. */
  async fork(body: Record<string, unknown>): Promise<unknown> {
    const fork = this.#mutable('fork');
    const from = keyField(body, 'from');
    const to = keyField(body, 'to');
    const version = versionField(body, 'version', false);
    const view = await callRunner(() => fork(from, to, version === undefined ? {} : { version }));
    return { session: { sessionKey: view.sessionKey, version: view.version } };
  }

  /** `POST /api/rewind` `{ sessionKey, version }`: `runner.rewind(sessionKey, version)`. */
  async rewind(body: Record<string, unknown>): Promise<unknown> {
    const rewind = this.#mutable('rewind');
    const key = keyField(body, 'sessionKey');
    const version = versionField(body, 'version', true) as number;
    const view = await callRunner(() => rewind(key, version));
    return { session: { sessionKey: view.sessionKey, version: view.version } };
  }

  /** The runner's `method`, bound; refused offline (403) or when the runner lacks it (501). */
  #mutable<M extends 'approve' | 'fork' | 'rewind'>(method: M): NonNullable<InspectableRunner[M]> {
    const runner = this.#d.runner;
    if (runner === undefined) {
      throw new HttpProblem(
        403,
        'read_only',
        `this inspector reads a store (offline): it cannot ${method}; start it over a live runner`,
      );
    }
    const fn = runner[method] as ((...args: never[]) => unknown) | undefined;
    if (fn === undefined) throw new HttpProblem(501, 'unsupported', `the runner has no ${method}() method`);
    return fn.bind(runner) as NonNullable<InspectableRunner[M]>;
  }
}

/** A runner call's failure as an HTTP problem: its Signalyard code and message. */
async function callRunner<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw problemOf(error);
  }
}

/** Any failure as an HTTP problem: Signalyard errors keep their code and message. */
export function problemOf(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error;
  if (isSignalyardError(error)) {
    const status = NOT_FOUND_CODES.has(error.code)
      ? 404
      : CONFLICT_CODES.has(error.code)
        ? 409
        : UNAVAILABLE_CODES.has(error.code)
          ? 503
          : 400;
    return new HttpProblem(status, error.code, error.message);
  }
  return new HttpProblem(500, 'internal', `the inspector failed: ${errorText(error)}`);
}

function keyParam(url: URL, name: string): string {
  const value = url.searchParams.get(name);
  if (value === null || value === '' || value.length > MAX_KEY) {
    throw new HttpProblem(
      400,
      'request_invalid',
      `expected the session key in the ${name} query parameter (1–${MAX_KEY} characters)`,
    );
  }
  return value;
}

function intParam(url: URL, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const text = url.searchParams.get(name);
  if (text === null) return undefined;
  const n = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= min && n <= max)) {
    throw new HttpProblem(
      400,
      'request_invalid',
      `query parameter ${name}=${JSON.stringify(text)}: expected an integer from ${min} to ${max}`,
    );
  }
  return n;
}

function keyField(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value === '' || value.length > MAX_KEY) {
    throw new HttpProblem(400, 'request_invalid', `${name}: expected a session key, got ${describe(value)}`);
  }
  return value;
}

function versionField(body: Record<string, unknown>, name: string, required: boolean): number | undefined {
  const value = body[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new HttpProblem(
      400,
      'request_invalid',
      `${name}: expected a version, an integer >= 1, got ${describe(value)}`,
    );
  }
  return value;
}

function decisionsField(value: unknown): ApprovalDecision[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 100) {
    throw new HttpProblem(
      400,
      'request_invalid',
      `decisions: expected 1–100 decisions [{ id, approved, reason? }], got ${describe(value)}`,
    );
  }
  return value.map((d: unknown, i) => {
    const o = d as { id?: unknown; approved?: unknown; reason?: unknown } | null;
    if (
      typeof o !== 'object' ||
      o === null ||
      typeof o.id !== 'string' ||
      o.id === '' ||
      typeof o.approved !== 'boolean' ||
      (o.reason !== undefined && typeof o.reason !== 'string')
    ) {
      throw new HttpProblem(
        400,
        'request_invalid',
        `decisions[${i}]: expected { id: string, approved: boolean, reason?: string }, got ${describe(d)}`,
      );
    }
    return { id: o.id, approved: o.approved, ...(o.reason !== undefined && o.reason !== '' && { reason: o.reason }) };
  });
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) return String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
