/**
 * The child side of the chaos harness ({@link ../chaos.ts}): what a transport's worker and
 * producer scripts call. A worker script builds its inbox, store and effects table, wraps the
 * inbox with {@link observeInbox} (deliveries and acks are reported to the parent), builds a
 * Runner with {@link chaosAgents}' agents, and hands it to {@link serveChaosWorker}; a producer
 * script hands its `accept` to {@link serveChaosProducer}. This module imports no Signalyard code:
 * the scripts pass in what it needs (`createRunner`, `crewEngine`, `scriptedModel`).
 */

/** What the parent tells every child (as JSON in the last argument). */
export interface ChaosChildConfig {
  /** The worker's id (`worker.id`); `'producer'` for the producer. */
  readonly id: string;
  readonly leaseMs: number;
  readonly pollMs: number;
  /** The producer's work: how many signals over how many sessions, spread over `produceMs`. */
  readonly signals: number;
  readonly sessions: number;
  readonly produceMs: number;
}

/** What a child reports to the parent. */
export type ChaosChildReport =
  | { readonly type: 'ready' }
  | { readonly type: 'failed'; readonly message: string }
  | {
      readonly type: 'delivery';
      readonly key: string;
      readonly seq: string;
      readonly receiptId: string;
      readonly attempt: number;
    }
  | { readonly type: 'ack'; readonly key: string; readonly seq: string; readonly receiptId: string }
  | { readonly type: 'read'; readonly key: string; readonly seq: string; readonly receiptId: string }
  | { readonly type: 'accepted'; readonly receipts: readonly ChaosReceipt[] }
  | { readonly type: 'produced' }
  | { readonly type: 'retry'; readonly text: string; readonly message: string }
  | { readonly type: 'closed' };

/** One accepted signal, as the producer saw it. */
export interface ChaosReceipt {
  readonly receiptId: string;
  readonly sessionKey: string;
  readonly seq: string;
  /** The user message's text. */
  readonly text: string;
}

/** What the parent asks a child (only to close, for now). */
export interface ChaosChildRequest {
  readonly type: 'close' | 'ping';
}

/** The config the parent gave this child (the last argument); throws when run without one. */
export function chaosConfig(): ChaosChildConfig {
  const raw = process.argv.at(-1);
  if (raw === undefined || process.send === undefined)
    throw new Error('usage: started by the chaos harness with an IPC channel and a JSON config as the last argument');
  return JSON.parse(raw) as ChaosChildConfig;
}

function report(message: ChaosChildReport): void {
  if (process.connected) process.send?.(message);
}

/** The part of an inbox entry the observer reads. */
interface ObservedEntry {
  readonly sessionKey: string;
  readonly seq: string;
  readonly receiptId: string;
}

/**
 * `inbox` with its `read`, `beginDelivery` and `ack` reported to the parent (`read` for each
 * entry a worker takes, `delivery` with the durable attempt count, `ack`); everything else goes straight to the inbox. Works for any object with
 * those two methods (class instances with private fields included: methods run on the inbox).
 */
export function observeInbox<T extends object>(inbox: T): T {
  return new Proxy(inbox, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (prop === 'beginDelivery')
        return async (entry: ObservedEntry): Promise<number> => {
          const attempt = (await method.call(target, entry)) as number;
          report({ type: 'delivery', key: entry.sessionKey, seq: entry.seq, receiptId: entry.receiptId, attempt });
          return attempt;
        };
      if (prop === 'read')
        return (...args: unknown[]): AsyncIterable<ObservedEntry> => reportReads(method.apply(target, args));
      if (prop === 'ack')
        return async (entry: ObservedEntry): Promise<void> => {
          await method.call(target, entry);
          report({ type: 'ack', key: entry.sessionKey, seq: entry.seq, receiptId: entry.receiptId });
        };
      return method.bind(target);
    },
  });
}

/** The entries of `entries` (an inbox's `read`), each reported as `read` as the worker takes it. */
async function* reportReads(entries: unknown): AsyncIterable<ObservedEntry> {
  for await (const entry of entries as AsyncIterable<ObservedEntry>) {
    report({ type: 'read', key: entry.sessionKey, seq: entry.seq, receiptId: entry.receiptId });
    yield entry;
  }
}

/** Runs `start` (which builds and starts the worker runner), reports `ready`, and closes it when the parent says so. */
export function serveChaosWorker(start: (config: ChaosChildConfig) => Promise<{ close(): Promise<void> }>): void {
  const config = chaosConfig();
  start(config).then(
    (worker) => {
      report({ type: 'ready' });
      process.on('message', (raw) => {
        if ((raw as ChaosChildRequest).type !== 'close') return;
        void worker.close().finally(() => {
          report({ type: 'closed' });
          if (process.connected) process.disconnect();
        });
      });
    },
    (error: unknown) => {
      report({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      process.exitCode = 1;
      if (process.connected) process.disconnect();
    },
  );
}

/** How long a producer retries one failed accept (with the same id) before it gives up, in ms. */
const RETRY_FOR_MS = 60_000;

/** How many accepts a producer keeps in flight (different session keys, mostly). */
const PRODUCER_WINDOW = 16;

/**
 * Accepts `config.signals` user messages `m<i>` for sessions `sessionKeyOf(i % sessions)`,
 * spread evenly over `config.produceMs`, reporting the receipts to the parent in batches; then
 * reports `produced` and waits to be told to close. A failed accept is retried (for up to a minute) with the same
 * message (the transport's dedupe id makes the retry safe).
 */
export function serveChaosProducer(
  open: (config: ChaosChildConfig) => Promise<{
    accept(sessionKey: string, text: string, id: string): Promise<{ receiptId: string; seq: string }>;
    close(): Promise<void>;
  }>,
  sessionKeyOf: (session: number) => string,
): void {
  const config = chaosConfig();
  void open(config)
    .then(async (producer) => {
      report({ type: 'ready' });
      process.on('message', (raw) => {
        if ((raw as ChaosChildRequest).type === 'close')
          void producer.close().finally(() => {
            report({ type: 'closed' });
            if (process.connected) process.disconnect();
          });
      });
      await produce(config, producer.accept.bind(producer), sessionKeyOf);
      report({ type: 'produced' });
    })
    .catch((error: unknown) => {
      report({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      process.exitCode = 1;
      if (process.connected) process.disconnect();
    });
}

async function produce(
  config: ChaosChildConfig,
  accept: (sessionKey: string, text: string, id: string) => Promise<{ receiptId: string; seq: string }>,
  sessionKeyOf: (session: number) => string,
): Promise<void> {
  const started = Date.now();
  let batch: ChaosReceipt[] = [];
  const one = async (i: number): Promise<void> => {
    const sessionKey = sessionKeyOf(i % config.sessions);
    const text = `m${String(i)}`;
    const first = Date.now();
    for (;;) {
      try {
        const { receiptId, seq } = await accept(sessionKey, text, `chaos-${text}`);
        batch.push({ receiptId, sessionKey, seq, text });
        return;
      } catch (error) {
        report({ type: 'retry', text, message: error instanceof Error ? error.message : String(error) });
        // Long enough for a transport's server to be killed and started again (a web tier retries too).
        if (Date.now() - first > RETRY_FOR_MS) throw error;
        await sleep(50);
      }
    }
  };
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < config.signals; i++) {
    // Spread evenly: signal i is not accepted before its share of produceMs has passed.
    const due = started + (config.produceMs * i) / config.signals;
    if (due > Date.now()) await sleep(due - Date.now());
    const p = one(i).finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= PRODUCER_WINDOW) await Promise.race(inFlight);
    if (batch.length >= 100) batch = flush(batch);
  }
  await Promise.all(inFlight);
  flush(batch);
}

function flush(batch: ChaosReceipt[]): ChaosReceipt[] {
  if (batch.length > 0) report({ type: 'accepted', receipts: batch });
  return [];
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
