/**
 * An inbox in a child process, driven by its parent over IPC: the inbox transports' tests use it
 * to show what holds across OS processes (seq in commit order, outcomes and notices from
 * another process, migrations at once). The child script builds its inbox and calls
 * {@link serveInboxChild}; the test starts it with {@link InboxChild.spawn}.
 */
import type { ChildProcess } from 'node:child_process';
import fc from 'fast-check';
import { expect } from 'vitest';
import { spawnTsx, withinOrKill } from './ipc-child.js';

/** The part of an `Inbox` a child serves (core's `Inbox` has this shape; this package imports no Signalyard code). */
export interface ChildInbox {
  accept(entry: { sessionKey: string; signal: { kind: 'user_message'; payload: string }; id: string }): Promise<{
    readonly seq: string;
    readonly receiptId: string;
  }>;
  outcome(receiptId: string, opts?: { timeoutMs?: number }): Promise<unknown>;
  putOutcome(
    receiptId: string,
    outcome: { sessionKey: string; agentId: string; status: 'completed'; output: string },
    ttlMs: number,
  ): Promise<void>;
  onNotify(listener: (sessionKey: string, what: 'entry' | 'stop') => void): () => void;
  notify(sessionKey: string, what: 'entry' | 'stop'): Promise<void>;
  close(): Promise<void>;
}

/** What a parent asks its child. */
export type InboxChildRequest =
  | {
      readonly type: 'accept';
      readonly id: number;
      readonly key: string;
      readonly count: number;
      readonly label: string;
    }
  | { readonly type: 'outcome'; readonly id: number; readonly receiptId: string; readonly timeoutMs: number }
  | {
      readonly type: 'put';
      readonly id: number;
      readonly receiptId: string;
      readonly sessionKey: string;
      readonly output: string;
    }
  | { readonly type: 'notify'; readonly id: number; readonly key: string; readonly what: 'entry' | 'stop' }
  | { readonly type: 'listen'; readonly id: number }
  | { readonly type: 'close'; readonly id: number };

/** What a child answers (`notice`s come unasked once it listens). */
export type InboxChildReply =
  | { readonly type: 'ready' }
  | {
      readonly type: 'failed';
      readonly id: number | undefined;
      readonly code: string | undefined;
      readonly message: string;
    }
  | {
      readonly type: 'accepted';
      readonly id: number;
      readonly seqs: readonly string[];
      readonly receiptIds: readonly string[];
    }
  | { readonly type: 'outcome'; readonly id: number; readonly outcome: unknown }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'notice'; readonly key: string; readonly what: string };

/** Serves requests from the parent on `open()`'s inbox until told to close; call it from a child script. */
export function serveInboxChild(open: () => ChildInbox | Promise<ChildInbox>): void {
  const send = (reply: InboxChildReply): void => {
    process.send?.(reply);
  };
  const failed = (id: number | undefined, error: unknown): void => {
    const e = error as { code?: unknown; message?: unknown };
    send({
      type: 'failed',
      id,
      code: typeof e.code === 'string' ? e.code : undefined,
      message: typeof e.message === 'string' ? e.message : String(error),
    });
  };
  const opened = Promise.resolve().then(open);
  opened.then(
    () => {
      send({ type: 'ready' });
    },
    (error: unknown) => {
      failed(undefined, error);
      process.exitCode = 1;
      if (process.connected) process.disconnect();
    },
  );
  process.on('message', (raw) => {
    const request = raw as InboxChildRequest;
    void opened
      .then((inbox) => handle(inbox, request, send))
      .catch((error: unknown) => {
        failed(request.id, error);
      });
  });
}

async function handle(
  inbox: ChildInbox,
  request: InboxChildRequest,
  send: (reply: InboxChildReply) => void,
): Promise<void> {
  switch (request.type) {
    case 'accept': {
      const seqs: string[] = [];
      const receiptIds: string[] = [];
      for (let i = 0; i < request.count; i++) {
        const receipt = await inbox.accept({
          sessionKey: request.key,
          signal: { kind: 'user_message', payload: `${request.label}${i}` },
          id: `${request.label}-${process.pid}-${request.id}-${i}`,
        });
        seqs.push(receipt.seq);
        receiptIds.push(receipt.receiptId);
      }
      send({ type: 'accepted', id: request.id, seqs, receiptIds });
      return;
    }
    case 'outcome':
      send({
        type: 'outcome',
        id: request.id,
        outcome: await inbox.outcome(request.receiptId, { timeoutMs: request.timeoutMs }),
      });
      return;
    case 'put':
      await inbox.putOutcome(
        request.receiptId,
        { sessionKey: request.sessionKey, agentId: 'child', status: 'completed', output: request.output },
        60_000,
      );
      send({ type: 'done', id: request.id });
      return;
    case 'notify':
      await inbox.notify(request.key, request.what);
      send({ type: 'done', id: request.id });
      return;
    case 'listen':
      inbox.onNotify((key, what) => {
        send({ type: 'notice', key, what });
      });
      send({ type: 'done', id: request.id });
      return;
    case 'close':
      await inbox.close();
      send({ type: 'done', id: request.id });
      if (process.connected) process.disconnect();
      return;
  }
}

/** Generous: a cold start compiles the TypeScript sources of every package with tsx. */
const START_DEADLINE_MS = 60_000;
const STEP_DEADLINE_MS = 60_000;

/** A child process serving an inbox (see {@link serveInboxChild}), seen from the test. */
export class InboxChild {
  readonly process: ChildProcess;
  /** What the child wrote to stderr so far (shown when it fails). */
  stderr = '';
  /** The notices it heard since it was told to `listen`. */
  readonly notices: { readonly key: string; readonly what: string }[] = [];
  readonly #waiting = new Map<number, { resolve: (reply: InboxChildReply) => void; reject: (error: Error) => void }>();
  #next = 1;
  readonly #ready: Promise<void>;

  private constructor(script: string, args: readonly string[], cwd: string) {
    this.process = spawnTsx(script, args, cwd, (chunk) => {
      this.stderr += chunk;
    });
    let ready!: () => void;
    let notReady!: (error: Error) => void;
    this.#ready = new Promise<void>((resolve, reject) => {
      ready = resolve;
      notReady = reject;
    });
    this.process.on('message', (raw) => {
      const reply = raw as InboxChildReply;
      if (reply.type === 'ready') ready();
      else if (reply.type === 'notice') this.notices.push({ key: reply.key, what: reply.what });
      else if (reply.type === 'failed' && reply.id === undefined)
        notReady(new Error(`the child failed to open its inbox: ${reply.code}: ${reply.message}`));
      else {
        const id = reply.id as number;
        const waiter = this.#waiting.get(id);
        this.#waiting.delete(id);
        waiter?.resolve(reply);
      }
    });
    this.process.once('exit', (code, signal) => {
      const error = new Error(`the child exited (code ${code}, signal ${signal}); stderr:\n${this.stderr}`);
      notReady(error);
      for (const waiter of this.#waiting.values()) waiter.reject(error);
      this.#waiting.clear();
    });
  }

  /** Starts `script` (a TypeScript file calling {@link serveInboxChild}) with `args`, and waits until its inbox is open. */
  static async spawn(script: string, args: readonly string[], cwd: string): Promise<InboxChild> {
    const child = new InboxChild(script, args, cwd);
    await withinOrKill(child.#ready, START_DEADLINE_MS, 'the child to open its inbox', child);
    return child;
  }

  /** Sends `request` (its `id` filled in) and resolves with the reply; a `failed` reply rejects with its code in the message. */
  async request(request: DistributiveOmit<InboxChildRequest, 'id'>): Promise<InboxChildReply> {
    const id = this.#next++;
    const reply = new Promise<InboxChildReply>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
    });
    this.process.send({ ...request, id });
    const answer = await withinOrKill(reply, STEP_DEADLINE_MS, `the reply to ${request.type}`, this);
    if (answer.type === 'failed')
      throw Object.assign(new Error(`${answer.code}: ${answer.message}`), { code: answer.code });
    return answer;
  }

  /** Kills the child with SIGKILL (no cleanup at all), unless it has exited. */
  kill(): void {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL');
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

const numeric = (a: string, b: string): number =>
  a.length === b.length ? (a < b ? -1 : a > b ? 1 : 0) : a.length - b.length;

/**
 * The property that concurrent accepts for one session key from two processes land with `seq` in
 * commit order: each round, `a` and `b` accept `na` and `nb` entries for a new key at the same
 * time while this process reads the key's seqs (`visible`) over and over. Afterwards every seq
 * accepted is there once, in increasing order (1…na+nb); each process's own accepts got
 * increasing seqs; and no read ever saw a later seq before an earlier one — which a seq taken
 * from a sequence outside the key's lock would fail.
 */
export async function checkSeqInCommitOrder(
  a: InboxChild,
  b: InboxChild,
  visible: (key: string) => Promise<string[]>,
  opts: { readonly numRuns: number; readonly max: number },
): Promise<void> {
  let round = 0;
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: opts.max }), fc.integer({ min: 1, max: opts.max }), async (na, nb) => {
      const key = `order-${round++}`;
      const seen: string[][] = [];
      let done = false;
      const watching = (async () => {
        while (!done) {
          seen.push(await visible(key));
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const [ra, rb] = await Promise.all([
        a.request({ type: 'accept', key, count: na, label: 'a' }),
        b.request({ type: 'accept', key, count: nb, label: 'b' }),
      ]);
      done = true;
      await watching;
      if (ra.type !== 'accepted' || rb.type !== 'accepted') throw new Error('expected accepted replies');
      const final = await visible(key);
      expect(final).toEqual([...ra.seqs, ...rb.seqs].sort(numeric));
      expect(final).toEqual(Array.from({ length: na + nb }, (_, i) => String(i + 1)));
      for (const seqs of [ra.seqs, rb.seqs]) expect([...seqs].sort(numeric)).toEqual(seqs);
      for (const seen1 of seen) expect(seen1).toEqual(final.slice(0, seen1.length));
    }),
    { numRuns: opts.numRuns },
  );
}
