/**
 * The chaos harness of inbox.md "Tests", for every durable inbox transport: separate OS
 * processes — `workers` worker runners and one producer runner (`worker: false`) — over one
 * transport; while the producer accepts `signals` user messages for `sessions` sessions, a random
 * worker is killed with SIGKILL every `killEveryMs` for `chaosMs` and restarted; then the
 * workers drain the inbox. Afterwards {@link runChaos} checks (with vitest's `expect`): every
 * session's history holds exactly its accepted user messages in `seq` order; the `plain`
 * effects table (a tool writing a row keyed by `ToolContext.idempotencyKey`, no commit) has
 * exactly one row per settled call; the `committed` table (a write after `ctx.commit`) at most
 * one row per call and exactly one for every call whose result was saved; every receipt's
 * outcome is retrievable; nothing is pending. Its figures (kills, redeliveries, the longest
 * recovery beside 5 × `leaseMs`) are printed and returned, never asserted.
 *
 * A transport supplies the child scripts (see `./chaos-child.ts` and `./chaos-agents.ts`) and
 * the parent's reads ({@link ChaosTarget}). Sizes default to the contract's and can be made
 * smaller with {@link chaosSizesFromEnv} (`SIGNALYARD_CHAOS_*`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'vitest';
import type { ChaosChildConfig, ChaosChildReport, ChaosReceipt } from './chaos-child.js';

/** The sizes and pace of a run; each defaults to the contract's figure. */
export interface ChaosSizes {
  /** Worker processes. Default 3. */
  readonly workers?: number;
  /** Sessions the signals are spread over. Default 100. */
  readonly sessions?: number;
  /** User messages accepted. Default 5,000. */
  readonly signals?: number;
  /** The workers' `leaseMs`. Default 2,000. */
  readonly leaseMs?: number;
  /** The workers' `pollMs`. Default 100. */
  readonly pollMs?: number;
  /** A random worker is killed this often while the chaos lasts. Default 1,500. */
  readonly killEveryMs?: number;
  /** How long workers are killed. Default 20,000. */
  readonly chaosMs?: number;
  /** The producer spreads its accepts over this long. Default: `chaosMs`. */
  readonly produceMs?: number;
  /** How long the drain may take before the run fails. Default 300,000. */
  readonly drainTimeoutMs?: number;
}

/** One history message, as the target reads it. */
export interface ChaosMessage {
  readonly role: string;
  readonly content: string;
}

/** What a transport gives the harness: its child scripts, and the parent's reads after the drain. */
export interface ChaosTarget extends ChaosSizes {
  /** A TypeScript file calling `serveChaosWorker` (run with tsx and the source conditions). */
  readonly workerScript: string;
  /** A TypeScript file calling `serveChaosProducer`. */
  readonly producerScript: string;
  /** The children's working directory (a package directory, so its dependencies resolve). */
  readonly cwd: string;
  /** Arguments before the config (a database path, a connection string). */
  readonly args?: readonly string[];
  /** How many entries are still pending (not acknowledged) in the inbox. */
  pending(): Promise<number>;
  /** The session's saved history. */
  history(sessionKey: string): Promise<readonly ChaosMessage[]>;
  /** The effects table's keys, one per row. */
  effects(table: 'plain' | 'committed'): Promise<readonly string[]>;
  /** The receipt's outcome, from the inbox (rejects when it is not retrievable). */
  outcome(receiptId: string): Promise<{ readonly status: string; readonly error?: { readonly code?: string } }>;
  /**
   * More trouble, started when the kills start and awaited before the drain (e.g. the
   * transport's server killed and started again once): the checks afterwards are the same.
   */
  disrupt?(): Promise<void>;
}

/** What a run measured (printed; never asserted). */
export interface ChaosFigures {
  readonly signals: number;
  readonly sessions: number;
  readonly workers: number;
  readonly kills: number;
  readonly deliveries: number;
  /** Deliveries with an attempt count above 1: an entry delivered again after a worker died. */
  readonly redeliveries: number;
  /** Per kill, the time until every session the killed worker was applying settled an entry again; the longest. */
  readonly longestRecoveryMs: number;
  /** Per kill, the time until another worker began delivering each of those sessions' entries (lease expiry + poll); the longest. */
  readonly longestTakeoverMs: number;
  /** 5 × `leaseMs`, printed beside the longest recovery. */
  readonly recoveryBoundMs: number;
  /** Committer claims re-applied after a kill between the commit and the save (answered outcome unknown). */
  readonly unknownClaims: number;
  /** Entries settled `failed` with `INBOX_POISONED`. */
  readonly poisoned: number;
  readonly drainMs: number;
  readonly elapsedMs: number;
}

/** Sizes from `SIGNALYARD_CHAOS_{WORKERS,SESSIONS,SIGNALS,LEASE_MS,POLL_MS,KILL_EVERY_MS,CHAOS_MS}` (unset: the defaults). */
export function chaosSizesFromEnv(env: NodeJS.ProcessEnv = process.env): ChaosSizes {
  const read = (name: string): number | undefined => {
    const raw = env[`SIGNALYARD_CHAOS_${name}`];
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isInteger(value) || value <= 0)
      throw new Error(`SIGNALYARD_CHAOS_${name}=${raw}: expected a positive integer`);
    return value;
  };
  const sizes = {
    workers: read('WORKERS'),
    sessions: read('SESSIONS'),
    signals: read('SIGNALS'),
    leaseMs: read('LEASE_MS'),
    pollMs: read('POLL_MS'),
    killEveryMs: read('KILL_EVERY_MS'),
    chaosMs: read('CHAOS_MS'),
  };
  return Object.fromEntries(Object.entries(sizes).filter(([, v]) => v !== undefined));
}

type Resolved = Required<ChaosSizes>;

function resolve(target: ChaosTarget): Resolved {
  const chaosMs = target.chaosMs ?? 20_000;
  return {
    workers: target.workers ?? 3,
    sessions: target.sessions ?? 100,
    signals: target.signals ?? 5000,
    leaseMs: target.leaseMs ?? 2000,
    pollMs: target.pollMs ?? 100,
    killEveryMs: target.killEveryMs ?? 1500,
    chaosMs,
    produceMs: target.produceMs ?? chaosMs,
    drainTimeoutMs: target.drainTimeoutMs ?? 300_000,
  };
}

/** A child process of the run (a worker or the producer). */
class Child {
  readonly process: ChildProcess;
  readonly id: string;
  stderr = '';
  ready = false;
  readonly started: Promise<void>;
  readonly exited: Promise<void>;

  constructor(target: ChaosTarget, config: ChaosChildConfig, script: string, onReport: (r: ChaosChildReport) => void) {
    this.id = config.id;
    const args = [...(target.args ?? []), JSON.stringify(config)];
    this.process = spawn(process.execPath, ['--conditions=@signalyard/source', '--import', 'tsx', script, ...args], {
      cwd: target.cwd,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.process.stderr?.setEncoding('utf8');
    this.process.stderr?.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-20_000);
    });
    this.exited = new Promise((done) =>
      this.process.once('exit', () => {
        done();
      }),
    );
    this.started = new Promise((ok, fail) => {
      this.process.on('message', (raw) => {
        const r = raw as ChaosChildReport;
        if (r.type === 'ready') {
          this.ready = true;
          ok();
        } else if (r.type === 'failed') fail(new Error(`${this.id} failed: ${r.message}\n${this.stderr}`));
        onReport(r);
      });
      void this.exited.then(() => {
        fail(new Error(`${this.id} exited before it was ready; stderr:\n${this.stderr}`));
      });
    });
    this.started.catch(() => undefined); // read by whoever waits for it
  }

  get alive(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  kill(): void {
    if (this.alive) this.process.kill('SIGKILL');
  }

  /** Asks the child to close; kills it when it has not exited after `ms`. */
  async close(ms = 15_000): Promise<void> {
    if (!this.alive) return;
    if (this.process.connected) this.process.send({ type: 'close' });
    const timer = setTimeout(() => {
      this.kill();
    }, ms);
    await this.exited;
    clearTimeout(timer);
  }
}

/** What the parent learns from the children's reports while the run goes. */
class Tally {
  readonly receipts: ChaosReceipt[] = [];
  produced = false;
  deliveries = 0;
  redeliveries = 0;
  longestRecoveryMs = 0;
  longestTakeoverMs = 0;
  /** The producer's accepts retried (with the same dedupe id), and why. */
  readonly retries: string[] = [];
  /** Per worker, the entries it has begun and not acknowledged (session key → seq). */
  readonly inFlight = new Map<string, Map<string, string>>();
  /** Per kill: when, whose, the sessions still to settle an entry again, and those no other worker has taken yet. */
  readonly recoveries: { at: number; worker: string; keys: Set<string>; untaken: Set<string> }[] = [];

  report(worker: string, r: ChaosChildReport): void {
    if (r.type === 'accepted') this.receipts.push(...r.receipts);
    else if (r.type === 'produced') this.produced = true;
    else if (r.type === 'retry') this.retries.push(`${r.text}: ${r.message}`);
    else if (r.type === 'delivery') {
      this.deliveries++;
      if (r.attempt > 1) this.redeliveries++;
      let mine = this.inFlight.get(worker);
      if (mine === undefined) this.inFlight.set(worker, (mine = new Map<string, string>()));
      mine.set(r.key, r.seq);
      for (const recovery of this.recoveries)
        if (recovery.worker !== worker && recovery.untaken.delete(r.key))
          this.longestTakeoverMs = Math.max(this.longestTakeoverMs, Date.now() - recovery.at);
    } else if (r.type === 'ack') {
      const mine = this.inFlight.get(worker);
      if (mine?.get(r.key) === r.seq) mine.delete(r.key);
      const now = Date.now();
      for (const recovery of this.recoveries) {
        if (recovery.worker === worker || !recovery.keys.delete(r.key)) continue;
        this.longestRecoveryMs = Math.max(this.longestRecoveryMs, now - recovery.at);
      }
    }
  }

  killed(worker: string): void {
    const keys = new Set(this.inFlight.get(worker)?.keys());
    this.inFlight.delete(worker);
    if (keys.size > 0) this.recoveries.push({ at: Date.now(), worker, keys, untaken: new Set(keys) });
  }
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** Runs the chaos run against `target`, checks it, prints and returns its figures. */
export async function runChaos(target: ChaosTarget): Promise<ChaosFigures> {
  const sizes = resolve(target);
  const tally = new Tally();
  const children: Child[] = [];
  const config = (id: string): ChaosChildConfig => ({
    id,
    leaseMs: sizes.leaseMs,
    pollMs: sizes.pollMs,
    signals: sizes.signals,
    sessions: sizes.sessions,
    produceMs: sizes.produceMs,
  });
  let generation = 0;
  const startWorker = (): Child => {
    const id = `w${String(generation++)}`;
    const child = new Child(target, config(id), target.workerScript, (r) => {
      tally.report(id, r);
    });
    children.push(child);
    return child;
  };
  const began = Date.now();
  try {
    const slots = Array.from({ length: sizes.workers }, startWorker);
    await Promise.all(slots.map((c) => c.started));
    const producer = new Child(target, config('producer'), target.producerScript, (r) => {
      tally.report('producer', r);
    });
    children.push(producer);
    await producer.started;
    const disrupted = target.disrupt?.();
    disrupted?.catch(() => undefined); // awaited (and so thrown) after the kills
    const kills = await chaos(sizes, slots, tally, startWorker);
    await disrupted;
    const drainMs = await drain(target, sizes, tally, producer);
    await Promise.all(children.map((c) => c.close()));
    if (tally.retries.length > 0)
      console.log(
        `chaos: ${String(tally.retries.length)} accepts retried, e.g. ${tally.retries.slice(0, 3).join('; ')}`,
      );
    // Printed before the checks, so that a failing run still shows what happened.
    console.log(
      `chaos: ${String(kills)} kills, ${String(tally.deliveries)} deliveries, ${String(tally.redeliveries)} redeliveries, longest takeover ${String(tally.longestTakeoverMs)} ms, longest recovery (until settled) ${String(tally.longestRecoveryMs)} ms (5 × leaseMs = ${String(5 * sizes.leaseMs)} ms), drain ${String(drainMs)} ms`,
    );
    const checked = await check(target, sizes, tally.receipts);
    const figures: ChaosFigures = {
      signals: tally.receipts.length,
      sessions: sizes.sessions,
      workers: sizes.workers,
      kills,
      deliveries: tally.deliveries,
      redeliveries: tally.redeliveries,
      longestRecoveryMs: tally.longestRecoveryMs,
      longestTakeoverMs: tally.longestTakeoverMs,
      recoveryBoundMs: 5 * sizes.leaseMs,
      unknownClaims: checked.unknownClaims,
      poisoned: checked.poisoned,
      drainMs,
      elapsedMs: Date.now() - began,
    };
    console.log(formatFigures(figures));
    return figures;
  } finally {
    for (const child of children) child.kill();
  }
}

/** Kills a random ready worker every `killEveryMs` for `chaosMs`, restarting it at once; returns the number of kills. */
async function chaos(sizes: Resolved, slots: Child[], tally: Tally, startWorker: () => Child): Promise<number> {
  const until = Date.now() + sizes.chaosMs;
  let kills = 0;
  while (Date.now() + sizes.killEveryMs <= until) {
    await sleep(sizes.killEveryMs);
    const ready = slots.map((c, i) => [c, i] as const).filter(([c]) => c.ready && c.alive);
    const pick = ready[Math.floor(Math.random() * ready.length)];
    if (pick === undefined) continue;
    const [victim, slot] = pick;
    victim.kill();
    tally.killed(victim.id);
    kills++;
    slots[slot] = startWorker();
  }
  return kills;
}

/** Waits for the producer to finish and the inbox to empty (a worker that died on start is restarted); returns how long the drain took. */
async function drain(target: ChaosTarget, sizes: Resolved, tally: Tally, producer: Child): Promise<number> {
  const start = Date.now();
  let said = start;
  for (;;) {
    if (Date.now() - said >= 30_000) {
      said = Date.now();
      console.log(`chaos: draining for ${String(said - start)} ms, ${String(await target.pending())} entries pending`);
    }
    if (Date.now() - start > sizes.drainTimeoutMs)
      throw new Error(
        `The inbox did not drain within ${String(sizes.drainTimeoutMs)} ms: ${String(await target.pending())} entries pending, producer ${tally.produced ? 'done' : `not done; stderr:\n${producer.stderr}`}`,
      );
    if (tally.produced && (await target.pending()) === 0) return Date.now() - start;
    if (!producer.alive && !tally.produced) throw new Error(`The producer died; stderr:\n${producer.stderr}`);
    await sleep(250);
  }
}

/** Numeric order of decimal `seq` strings. */
const bySeq = (a: ChaosReceipt, b: ChaosReceipt): number =>
  a.seq.length === b.seq.length ? (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0) : a.seq.length - b.seq.length;

/** The contract's checks after the drain; returns what it counted. */
async function check(
  target: ChaosTarget,
  sizes: Resolved,
  receipts: readonly ChaosReceipt[],
): Promise<{ unknownClaims: number; poisoned: number }> {
  expect(receipts).toHaveLength(sizes.signals);
  expect(await target.pending()).toBe(0);
  const poisoned = new Set<string>();
  const statusOf = new Map<string, string>();
  const missing: string[] = [];
  for (const receipt of receipts) {
    const outcome = await target.outcome(receipt.receiptId).catch((error: unknown) => {
      missing.push(`${receipt.sessionKey} seq ${receipt.seq} (${receipt.receiptId}): ${String(error)}`);
    });
    if (outcome === undefined) continue;
    expect(['completed', 'failed', 'rejected', 'paused', 'stopped', 'unrouted']).toContain(outcome.status);
    if (outcome.error?.code === 'INBOX_POISONED') poisoned.add(receipt.receiptId);
    statusOf.set(
      receipt.receiptId,
      `${outcome.status}${outcome.error?.code === undefined ? '' : ` ${outcome.error.code}`}`,
    );
  }
  const bySession = new Map<string, ChaosReceipt[]>();
  for (const r of receipts) bySession.set(r.sessionKey, [...(bySession.get(r.sessionKey) ?? []), r]);
  const plainExpected = new Set<string>();
  const committedSaved: string[] = [];
  let unknownClaims = 0;
  for (const [key, list] of bySession) {
    list.sort(bySeq);
    const history = await target.history(key);
    expect(
      history.filter((m) => m.role === 'user').map((m) => m.content),
      `the user messages of ${key}`,
    ).toEqual(list.map((r) => r.text));
    for (const m of history) {
      const wrote = /^wrote (.+)$/.exec(m.content)?.[1];
      if (wrote !== undefined && m.role === 'tool') plainExpected.add(wrote);
      if (wrote !== undefined && m.role === 'assistant') committedSaved.push(wrote);
      if (m.content.startsWith('outcome unknown: not retried')) unknownClaims++;
    }
    // Each crew call's key is its entry's receipt id with the call's number (guarantee 3).
    if (key.startsWith('agent:crew:'))
      for (const r of list)
        if (!poisoned.has(r.receiptId)) expect(plainExpected.has(`${r.receiptId}:tool:0`), r.text).toBe(true);
  }
  const allPlain = await target.effects('plain');
  expect(new Set(allPlain).size, 'one plain row per key').toBe(allPlain.length);
  // An entry that ended INBOX_POISONED was never settled by a run of its engine: the attempts
  // killed before it may have written their plain row, and no saved history holds that call
  // (inbox.md asks for exactly one row per *settled* call). Its rows are left out.
  const plain = allPlain.filter((k) => !poisoned.has(k.split(':')[0] ?? ''));
  // A row whose call is not saved: name its entry's outcome, to tell why.
  const unsaved = plain
    .filter((k) => !plainExpected.has(k))
    .map((k) => `${k} (outcome ${statusOf.get(k.split(':')[0] ?? '') ?? 'not retrievable'})`);
  expect(unsaved, 'plain rows whose call was not saved').toEqual([]);
  expect([...plain].sort(), 'a plain row for every saved call, and no other').toEqual([...plainExpected].sort());
  const committed = countBy(await target.effects('committed'));
  for (const [key, n] of committed) expect(n, `committed rows of ${key}`).toBe(1);
  for (const key of committedSaved) expect(committed.get(key), `the committed row of saved call ${key}`).toBe(1);
  // Last, so that a run with outcomes missing still shows whether the histories and effects held.
  expect(missing, 'receipts whose outcome is not retrievable').toEqual([]);
  return { unknownClaims, poisoned: poisoned.size };
}

function countBy(keys: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

/** The figures as printed lines. */
export function formatFigures(f: ChaosFigures): string {
  return [
    `chaos: ${String(f.signals)} signals over ${String(f.sessions)} sessions, ${String(f.workers)} workers + 1 producer`,
    `chaos: ${String(f.kills)} kills (SIGKILL), ${String(f.deliveries)} deliveries, ${String(f.redeliveries)} redeliveries, ${String(f.unknownClaims)} claims answered outcome unknown, ${String(f.poisoned)} poisoned`,
    `chaos: longest takeover ${String(f.longestTakeoverMs)} ms, longest recovery (until settled) ${String(f.longestRecoveryMs)} ms (5 × leaseMs = ${String(f.recoveryBoundMs)} ms); drain ${String(f.drainMs)} ms; whole run ${String(f.elapsedMs)} ms`,
  ].join('\n');
}
