import { ConfigError, describeValue, type ConfigProblem } from '@signalyard/core';
import {
  INBOX_LIMIT_OPTIONS,
  isRecord,
  msOptionProblem,
  resolveInboxLimits,
  unknownOptionProblems,
  type InboxLimits,
} from '@signalyard/core/internal';
import type { ConnectionOptions, NatsConnection } from '@nats-io/nats-core';

/** The stream a {@link JetStreamInbox} uses when given no `stream` option. */
export const DEFAULT_JETSTREAM_STREAM = 'SIGNALYARD_INBOX';

/** What every form of {@link JetStreamInboxOptions} accepts. */
export interface JetStreamInboxCommonOptions {
  /**
   * The entries stream's name (default `SIGNALYARD_INBOX`): letters, digits, `_` and `-`, at most
   * 32 characters. Everything else the inbox keeps on the server is named after it
   * (`<stream>_EVENTS`, `<stream>_LEASES`, `<stream>_p<n>` consumers, …; see the README).
   */
  stream?: string;
  /**
   * How many partitions the session keys are hashed into (default 16): one durable consumer and
   * one lease each. Fixed when the stream is created (by the first use of an inbox, or
   * `provision()`): every call of an inbox with another number over an existing stream rejects
   * with `INBOX_CONFIG_INVALID` naming both. More partitions spread keys over more workers.
   */
  partitions?: number;
  /**
   * The consumers' `ack_wait` and the lease bucket's `max_age`, in milliseconds (default 30,000):
   * the longest a lease lives on the server without renewal, whatever `acquire` asks, and how
   * long a delivered entry stays with its holder without `working()`. Fixed when the consumers are created (first use, or `provision()`).
   */
  leaseMs?: number;
  /** How long outcomes, dead letters and stream events are kept (the buckets' and the events stream's `max_age`), in milliseconds. Default 600,000. */
  outcomeTtlMs?: number;
  /** How often a waiting `outcome()` or `events()` looks again, besides the wake-ups the server sends, in milliseconds. Default 1,000. */
  pollMs?: number;
  /** How long `accept` waits for the stream's acknowledgement before rejecting with `INBOX_OUTCOME_UNKNOWN`, in milliseconds. Default 5,000. */
  publishTimeoutMs?: number;
  /** How many entries one session may have waiting before `accept` refuses with `INBOX_FULL` (counted from the server at most a second ago plus this process's accepts since; see the README). Default 1,000. */
  maxPendingPerSession?: number;
  /** How many entries the inbox may have waiting before `accept` refuses with `INBOX_FULL`: the stream's `max_msgs` (discard new), exact, fixed when the stream is created. Default 100,000. */
  maxPending?: number;
  /** The stream's duplicate window: how long an accepted `id` is remembered, in milliseconds. Default 600,000. Fixed when the stream is created. */
  dedupeWindowMs?: number;
  /** The `retryAfterMs` an `INBOX_FULL` error carries, in milliseconds. Default 1,000. */
  retryAfterMs?: number;
}

/** Options of an inbox that opens (and on `close()` closes) a connection of its own. */
export interface JetStreamInboxServersOptions extends JetStreamInboxCommonOptions {
  /** The server URL(s), e.g. `nats://nats.internal:4222` or several of a cluster. */
  servers: string | string[];
  /**
   * More options for the client's `connect` (credentials, TLS, reconnect policy: reconnects are
   * the client library's). `noAsyncTraces` defaults to `true` here (the client's stack-traced
   * request errors cost about a third of an `accept`'s CPU); pass `false` to have them.
   */
  connectOptions?: Omit<ConnectionOptions, 'servers'>;
  /** Not with `servers`. */
  connection?: undefined;
}

/** Options of an inbox over a connection you own: the inbox never closes it. */
export interface JetStreamInboxConnectionOptions extends JetStreamInboxCommonOptions {
  /** A connection from `@nats-io/transport-node`'s `connect`. */
  connection: NatsConnection;
  /** Not with `connection`. */
  servers?: undefined;
  /** Not with `connection`. */
  connectOptions?: undefined;
}

/**
 * Options of {@link JetStreamInbox}: exactly one of `servers` (the inbox connects, and closes the
 * connection on `close()`) or `connection` (yours), and the settings. Unknown keys are refused
 * with every other problem in one `ConfigError`.
 */
export type JetStreamInboxOptions = JetStreamInboxServersOptions | JetStreamInboxConnectionOptions;

/** Validated options. @internal */
export interface ResolvedJetStreamInboxOptions extends InboxLimits {
  readonly stream: string;
  readonly partitions: number;
  readonly leaseMs: number;
  readonly outcomeTtlMs: number;
  readonly pollMs: number;
  readonly publishTimeoutMs: number;
  readonly servers: string | string[] | undefined;
  readonly connectOptions: Omit<ConnectionOptions, 'servers'> | undefined;
  readonly connection: NatsConnection | undefined;
}

const KNOWN = [
  'servers',
  'connectOptions',
  'connection',
  'stream',
  'partitions',
  'leaseMs',
  'outcomeTtlMs',
  'pollMs',
  'publishTimeoutMs',
  ...INBOX_LIMIT_OPTIONS,
];

const STREAM_NAME = /^[A-Za-z0-9_-]{1,32}$/;

function connectionProblems(options: Readonly<Record<string, unknown>>, problems: ConfigProblem[]): void {
  const { servers, connection, connectOptions } = options;
  const serversOk =
    (typeof servers === 'string' && servers !== '') ||
    (Array.isArray(servers) && servers.length > 0 && servers.every((s) => typeof s === 'string' && s !== ''));
  if ((servers === undefined) === (connection === undefined)) {
    problems.push({
      path: 'servers',
      message: 'expected exactly one of servers (URLs) or connection (a NatsConnection)',
    });
  } else if (servers !== undefined && !serversOk) {
    problems.push({
      path: 'servers',
      message: `expected a URL or a non-empty list of URLs, got ${describeValue(servers)}`,
    });
  } else if (
    connection !== undefined &&
    (!isRecord(connection) || typeof (connection as { publish?: unknown }).publish !== 'function')
  ) {
    problems.push({ path: 'connection', message: `expected a NatsConnection, got ${describeValue(connection)}` });
  }
  if (connectOptions !== undefined && (connection !== undefined || !isRecord(connectOptions))) {
    problems.push({
      path: 'connectOptions',
      message: `expected client connect options beside servers (not with connection), got ${describeValue(connectOptions)}`,
    });
  }
}

/**
 * Validates inbox options, reporting every problem at once (nothing touches the network here).
 * @throws ConfigError `CONFIG_INVALID`.
 * @internal
 */
export function resolveJetStreamInboxOptions(options: JetStreamInboxOptions): ResolvedJetStreamInboxOptions {
  if (!isRecord(options)) {
    throw new ConfigError({
      problems: [
        { path: '', message: `expected inbox options { servers } or { connection }, got ${describeValue(options)}` },
      ],
    });
  }
  const problems: ConfigProblem[] = [];
  const given = options as unknown as Readonly<Record<string, unknown>>;
  connectionProblems(given, problems);
  const { stream = DEFAULT_JETSTREAM_STREAM, partitions = 16 } = options;
  if (typeof stream !== 'string' || !STREAM_NAME.test(stream)) {
    problems.push({
      path: 'stream',
      message: `expected 1 to 32 letters, digits, _ or -, got ${describeValue(stream)}`,
    });
  }
  if (typeof partitions !== 'number' || !Number.isSafeInteger(partitions) || partitions < 1 || partitions > 1024) {
    problems.push({
      path: 'partitions',
      message: `expected an integer from 1 to 1024, got ${describeValue(partitions)}`,
    });
  }
  for (const name of ['leaseMs', 'outcomeTtlMs', 'pollMs', 'publishTimeoutMs']) msOptionProblem(given, name, problems);
  const limits = resolveInboxLimits(given, problems);
  unknownOptionProblems(given, KNOWN, problems);
  if (problems.length > 0) throw new ConfigError({ problems });
  return {
    ...limits,
    stream,
    partitions,
    leaseMs: options.leaseMs ?? 30_000,
    outcomeTtlMs: options.outcomeTtlMs ?? 600_000,
    pollMs: options.pollMs ?? 1000,
    publishTimeoutMs: options.publishTimeoutMs ?? 5000,
    servers: options.servers,
    connectOptions: options.connectOptions,
    connection: options.connection,
  };
}
