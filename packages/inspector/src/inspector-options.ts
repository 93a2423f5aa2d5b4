import { randomBytes } from 'node:crypto';
import { describeValue, systemClock, type CheckpointStore, type Clock } from '@signalyard/core';
import { isAbortSignal } from '@signalyard/core/internal';
import type { AgentDiagrams } from './diagrams.js';
import { InspectorError } from './errors/inspector-error.js';
import type { InspectableRunner } from './inspectable-runner.js';
import type { InspectorInbox } from './inspector-inbox.js';

/** The options of {@link startInspector}. */
export interface InspectorOptions {
  /** Live: sessions, events as they happen, and (when the runner has them) approve, fork, rewind. */
  runner?: InspectableRunner;
  /** Offline (when there is no `runner`): sessions and their versions from the store alone, read-only. */
  store?: CheckpointStore;
  /**
   * The durable inbox the runner's workers settle from (`SqliteInbox`, `PostgresInbox`,
   * `JetStreamInbox`, `MemoryInbox`, or any inbox with `pending()`, `leases()` and
   * `deadLetters()`): the page then shows each session's entries waiting to be settled and the
   * lease holding the session (worker id, expiry), every lease held, and the dead letters.
   * Read-only, live or offline.
   *
   * With a `runner`, not needed: its own durable inbox (`runner.inbox`) is shown when it has those
   * methods. Given, this one wins (e.g. a producer-only runner's page showing another inbox).
   */
  inbox?: InspectorInbox;
  /**
   * A replay report file: the JSON `signalyard replay --json` prints (or
   * `JSON.stringify(await replay(…))` of `@signalyard/replay`). The page opens it at `#replay`
   * and shows each session's recorded and replayed runs side by side, turn by turn, the first
   * divergence highlighted. Read again on every request, so a new replay shows on a reload. (The
   * page can also open a report file from disk without this option.)
   */
  replayReport?: string;
  /** Default 4319; 0 = any free port (read it from `inspector.url`). */
  port?: number;
  /** The address to listen on; default `'127.0.0.1'` (this machine only). */
  host?: string;
  /** The secret every request must carry; default 32 random hex characters. Letters, digits, `-` and `_`. */
  token?: string;
  /** `Host` header values accepted (DNS-rebinding defence); default the loopback names with the port: `127.0.0.1:<port>`, `localhost:<port>`, `[::1]:<port>`. */
  allowedHosts?: readonly string[];
  /** Who approvals made from the page are recorded as (`runner.approve(…, { by })`); default `'inspector'`. */
  by?: string;
  /**
   * The Mermaid texts of each agent's diagrams, by agent id (FSM, crew, pipeline). With a runner
   * that has `describe()`, its diagrams are shown without this; an agent given here overrides
   * what `describe()` says of it. Offline (store only), this is the only source of diagrams.
   */
  diagrams?: Readonly<Record<string, AgentDiagrams>>;
  /**
   * How many recent events the page's timeline shows per live session; default 200. With a
   * runner that has `timeline()`, the runner's log is read (it keeps up to its own bound);
   * otherwise the inspector keeps this many events per session from the moment it starts.
   */
  timelineLimit?: number;
  /**
   * How many live event streams (open pages) the inspector serves at once; default 16. One more
   * is answered 503 with `Retry-After`, and the page tries again after it.
   */
  maxEventStreams?: number;
  /**
   * How many bytes a live event stream may have waiting to be sent; default 1 MiB (1,048,576).
   * A page that stops reading (a laptop asleep, a dead network) is disconnected when an event
   * would take it past this, instead of the process buffering every event for it; the page
   * reconnects and catches up when it reads again.
   */
  maxEventStreamBytes?: number;
  /**
   * Where the inspector reads the time (the `at` of the timeline entries it records itself, the
   * durations it measures); default `systemClock` (`Date.now()`).
   */
  clock?: Clock;
  /** Closes the inspector when aborted (as `close()` does). */
  abortSignal?: AbortSignal;
}

/** {@link InspectorOptions} after validation. @internal */
export interface ResolvedInspectorOptions {
  readonly runner: InspectableRunner | undefined;
  readonly store: CheckpointStore | undefined;
  readonly inbox: InspectorInbox | undefined;
  readonly replayReport: string | undefined;
  readonly port: number;
  readonly host: string;
  readonly token: string;
  readonly allowedHosts: readonly string[] | undefined;
  readonly by: string;
  readonly diagrams: ReadonlyMap<string, AgentDiagrams>;
  readonly timelineLimit: number;
  readonly maxEventStreams: number;
  readonly maxEventStreamBytes: number;
  readonly clock: Clock;
  readonly abortSignal: AbortSignal | undefined;
}

/** The default of {@link InspectorOptions.maxEventStreams}. */
const DEFAULT_MAX_EVENT_STREAMS = 16;
/** The default of {@link InspectorOptions.maxEventStreamBytes}: 1 MiB. */
const DEFAULT_MAX_EVENT_STREAM_BYTES = 1024 * 1024;

const TOKEN = /^[A-Za-z0-9_-]+$/;
const RUNNER_METHODS = ['on', 'listSessions', 'session', 'sessionAt', 'history'] as const;
const OPTIONAL_RUNNER_METHODS = ['transcript', 'fork', 'rewind', 'approve', 'timeline', 'describe'] as const;
const DIAGRAM_KINDS: ReadonlySet<string> = new Set(['fsm', 'crew', 'pipeline']);

/**
 * Checks every option and reports every problem at once.
 * @throws InspectorError `INSPECTOR_OPTIONS_INVALID` listing the problems.
 */
export function resolveInspectorOptions(opts: unknown): ResolvedInspectorOptions {
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
    throw invalid([`expected an options object { runner?, store?, port?, … }, got ${describeValue(opts)}`]);
  }
  const o = opts as Record<keyof InspectorOptions, unknown>;
  const problems = [
    ...sourceProblems(o.runner, o.store),
    ...inboxProblems(o.inbox),
    ...(o.replayReport === undefined || (typeof o.replayReport === 'string' && o.replayReport !== '')
      ? []
      : [`replayReport: expected the path of a replay report file (JSON), got ${describeValue(o.replayReport)}`]),
    ...serverProblems(o),
    ...limitProblems(o),
    ...diagramProblems(o.diagrams),
  ];
  if (problems.length > 0) throw invalid(problems);
  const diagrams = new Map<string, AgentDiagrams>(Object.entries((o.diagrams ?? {}) as Record<string, AgentDiagrams>));
  return {
    runner: o.runner as InspectableRunner | undefined,
    store: o.store as CheckpointStore | undefined,
    inbox: (o.inbox as InspectorInbox | undefined) ?? runnerInbox(o.runner as InspectableRunner | undefined),
    replayReport: o.replayReport as string | undefined,
    port: (o.port as number | undefined) ?? 4319,
    host: (o.host as string | undefined) ?? '127.0.0.1',
    token: (o.token as string | undefined) ?? randomBytes(16).toString('hex'),
    allowedHosts: o.allowedHosts as readonly string[] | undefined,
    by: (o.by as string | undefined) ?? 'inspector',
    diagrams,
    timelineLimit: (o.timelineLimit as number | undefined) ?? 200,
    maxEventStreams: (o.maxEventStreams as number | undefined) ?? DEFAULT_MAX_EVENT_STREAMS,
    maxEventStreamBytes: (o.maxEventStreamBytes as number | undefined) ?? DEFAULT_MAX_EVENT_STREAM_BYTES,
    clock: (o.clock as Clock | undefined) ?? systemClock,
    abortSignal: o.abortSignal as AbortSignal | undefined,
  };
}

const INBOX_METHODS = ['pending', 'leases', 'deadLetters'] as const;

function inboxProblems(inbox: unknown): string[] {
  if (inbox === undefined) return [];
  if (typeof inbox !== 'object' || inbox === null) {
    return [`inbox: expected an inbox with pending(), leases() and deadLetters(), got ${describeValue(inbox)}`];
  }
  const missing = INBOX_METHODS.filter((m) => typeof (inbox as Record<string, unknown>)[m] !== 'function');
  return missing.length === 0
    ? []
    : [
        `inbox: expected an inbox with pending(), leases() and deadLetters() (SqliteInbox, PostgresInbox, MemoryInbox), but it has no ${missing.join(', ')} method`,
      ];
}

/** Whether `inbox` has every method the inspector reads (`pending`, `leases`, `deadLetters`). */
function isInspectorInbox(inbox: unknown): inbox is InspectorInbox {
  if (typeof inbox !== 'object' || inbox === null) return false;
  return INBOX_METHODS.every((m) => typeof (inbox as Record<string, unknown>)[m] === 'function');
}

/** The runner's own durable inbox (`runner.inbox`) when the inspector can list it; else `undefined`. */
function runnerInbox(runner: InspectableRunner | undefined): InspectorInbox | undefined {
  const inbox = runner?.inbox;
  return isInspectorInbox(inbox) ? inbox : undefined;
}

function sourceProblems(runner: unknown, store: unknown): string[] {
  const problems: string[] = [];
  if (runner === undefined && store === undefined) {
    problems.push('expected a runner (live) or a store (offline), got neither');
  }
  if (runner !== undefined) {
    if (typeof runner !== 'object' || runner === null) {
      problems.push(`runner: expected a Runner, got ${describeValue(runner)}`);
    } else {
      const r = runner as Record<string, unknown>;
      const missing = RUNNER_METHODS.filter((m) => typeof r[m] !== 'function');
      const wrong = OPTIONAL_RUNNER_METHODS.filter((m) => r[m] !== undefined && typeof r[m] !== 'function');
      if (missing.length > 0) problems.push(`runner: expected a Runner, but it has no ${missing.join(', ')} method`);
      if (wrong.length > 0) problems.push(`runner: ${wrong.join(', ')} must be a method when present`);
    }
  }
  if (store !== undefined) {
    const s = store as Record<string, unknown> | null;
    if (typeof store !== 'object' || s === null || typeof s.load !== 'function' || typeof s.list !== 'function') {
      problems.push(`store: expected a CheckpointStore (load, list), got ${describeValue(store)}`);
    }
  }
  return problems;
}

function serverProblems(o: Record<keyof InspectorOptions, unknown>): string[] {
  const problems: string[] = [];
  const { port, host, token, allowedHosts, by, abortSignal } = o;
  if (port !== undefined && !(typeof port === 'number' && Number.isInteger(port) && port >= 0 && port <= 65535)) {
    problems.push(`port: expected an integer from 0 (any free port) to 65535, got ${describeValue(port)}`);
  }
  if (host !== undefined && !(typeof host === 'string' && host.trim() !== '')) {
    problems.push(`host: expected an address such as "127.0.0.1", got ${describeValue(host)}`);
  }
  if (token !== undefined && !(typeof token === 'string' && TOKEN.test(token))) {
    problems.push(`token: expected a non-empty string of letters, digits, "-" and "_", got ${describeValue(token)}`);
  }
  if (
    allowedHosts !== undefined &&
    !(Array.isArray(allowedHosts) && allowedHosts.every((h) => typeof h === 'string' && h.trim() !== ''))
  ) {
    problems.push(
      `allowedHosts: expected a list of Host header values such as "localhost:4319", got ${describeValue(allowedHosts)}`,
    );
  }
  if (by !== undefined && !(typeof by === 'string' && by.trim() !== '')) {
    problems.push(`by: expected a non-empty name for approvals made from the page, got ${describeValue(by)}`);
  }
  if (abortSignal !== undefined && !isAbortSignal(abortSignal)) {
    problems.push(`abortSignal: expected an AbortSignal, got ${describeValue(abortSignal)}`);
  }
  return problems;
}

/** The bounds: the timeline's length, the event streams' number and buffers; and the clock. */
function limitProblems(o: Record<keyof InspectorOptions, unknown>): string[] {
  const problems: string[] = [];
  for (const name of ['timelineLimit', 'maxEventStreams', 'maxEventStreamBytes'] as const) {
    const value = o[name];
    if (value !== undefined && !(typeof value === 'number' && Number.isSafeInteger(value) && value >= 1)) {
      problems.push(`${name}: expected an integer >= 1, got ${describeValue(value)}`);
    }
  }
  const clock = o.clock as { now?: unknown } | null | undefined;
  if (clock !== undefined && (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function')) {
    problems.push(`clock: expected a Clock ({ now(): number }), got ${describeValue(clock)}`);
  }
  return problems;
}

function diagramProblems(diagrams: unknown): string[] {
  if (diagrams === undefined) return [];
  if (typeof diagrams !== 'object' || diagrams === null || Array.isArray(diagrams)) {
    return [`diagrams: expected { [agentId]: { fsm?, crew?, pipeline? } }, got ${describeValue(diagrams)}`];
  }
  const problems: string[] = [];
  for (const [agentId, entry] of Object.entries(diagrams)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`diagrams.${agentId}: expected { fsm?, crew?, pipeline? }, got ${describeValue(entry)}`);
      continue;
    }
    for (const [kind, text] of Object.entries(entry as Record<string, unknown>)) {
      if (!DIAGRAM_KINDS.has(kind)) {
        problems.push(`diagrams.${agentId}.${kind}: unknown diagram; expected fsm, crew or pipeline`);
      } else if (text !== undefined && typeof text !== 'string') {
        problems.push(`diagrams.${agentId}.${kind}: expected Mermaid text, got ${describeValue(text)}`);
      }
    }
  }
  return problems;
}

function invalid(problems: readonly string[]): InspectorError {
  return new InspectorError({
    code: 'INSPECTOR_OPTIONS_INVALID',
    message: `Invalid inspector options: ${problems.join('; ')}`,
  });
}
