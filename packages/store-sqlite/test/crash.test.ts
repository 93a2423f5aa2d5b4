// Crash safety (persistence.md): a real child process runs a Runner with an FSM agent on a
// SQLite file; the parent streams signals to it, kills it with SIGKILL mid-stream, starts a new
// one on the same file, and checks that every session holds exactly the signals acknowledged
// before the kill, plus at most the one that was in flight, with a consistent FSM state.
// Repeated at several kill points on the same file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { IpcChild, withinOrKill } from '@signalyard/test-utils/ipc-child';
import { SessionKey, formatSessionKey, type SessionCheckpointV1 } from 'signalyard';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ChildReply, ChildSessionView } from './fixtures/crash-child.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url));

/** Generous: a cold start compiles the TypeScript sources of every package with tsx. */
const START_DEADLINE_MS = 60_000;
const STEP_DEADLINE_MS = 30_000;

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-crash-'));
const children = new Set<Child>();
afterEach(() => {
  for (const child of children) child.kill();
  children.clear();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

type OutcomeReply = Extract<ChildReply, { type: 'outcome' }>;

/** One child process running test/fixtures/crash-child.ts on the file `path`. */
class Child extends IpcChild {
  /** Called for every `outcome` reply. */
  onOutcome: ((reply: OutcomeReply) => void) | undefined;

  constructor(path: string) {
    super(childScript, [path], packageDir);
    children.add(this);
  }

  sendSignal(session: string, text: string): void {
    // A kill loses the replies still to come: nobody waits for them.
    this.request<OutcomeReply>({ type: 'signal', session, text }).then(
      (reply) => this.onOutcome?.(reply),
      () => undefined,
    );
  }

  async inspect(sessions: readonly string[]): Promise<readonly (ChildSessionView | null)[]> {
    const reply = await withinOrKill(
      this.request<Exclude<ChildReply, { type: 'ready' }>>({ type: 'inspect', sessions }),
      STEP_DEADLINE_MS,
      'the reply to inspect',
      this,
    );
    if (reply.type !== 'sessions') throw new Error(`expected a sessions reply, got ${JSON.stringify(reply)}`);
    return reply.views;
  }
}

const SESSIONS = ['s0', 's1', 's2', 's3', 's4', 's5'];
const textOf = (session: string, i: number): string => `${session}/m${i}`;

/** What the parent knows: per session, signals acknowledged, and whether one was in flight at the kill. */
interface Ledger {
  readonly acked: Map<string, number>;
  readonly inFlight: Map<string, boolean>;
}

/**
 * Checks that `views` hold, per session, exactly the acknowledged signals (plus at most the one
 * in flight), in order, with engine state, FSM state and checkpoint version consistent with
 * them; then records what the file holds as acknowledged. Returns how many in-flight signals
 * turned out to be saved.
 */
function verify(ledger: Ledger, views: readonly (ChildSessionView | null)[]): number {
  let savedInFlight = 0;
  SESSIONS.forEach((session, index) => {
    const view = views[index] ?? null;
    const acked = ledger.acked.get(session) ?? 0;
    const inFlight = ledger.inFlight.get(session) === true;
    const n = view === null ? 0 : view.history.length / 2;
    const label = `session ${session} (acknowledged ${acked}${inFlight ? ' + 1 in flight' : ''})`;
    expect(n, label).toBeGreaterThanOrEqual(acked);
    expect(n, label).toBeLessThanOrEqual(acked + (inFlight ? 1 : 0));
    if (n > acked) savedInFlight++;
    if (view !== null) {
      const expected = Array.from({ length: n }, (_, i) => [
        { role: 'user', content: textOf(session, i) },
        { role: 'assistant', content: `ack ${textOf(session, i)}` },
      ]).flat();
      expect(view.history, label).toEqual(expected);
      expect(view.state, label).toBe(n % 2 === 1 ? 'odd' : 'even');
      expect(view.engineState, label).toEqual(n === 0 ? undefined : { count: n, last: textOf(session, n - 1) });
      expect(view.version, `${label}: one save per applied signal`).toBe(n);
    }
    ledger.acked.set(session, n);
    ledger.inFlight.set(session, false);
  });
  return savedInFlight;
}

/**
 * Streams signals to every session (one in flight per session, the next sent when the last is
 * acknowledged) and kills the child with SIGKILL when `killAfter` acknowledgements arrived
 * (0: right after the first signals were sent).
 */
async function streamAndKill(child: Child, ledger: Ledger, killAfter: number): Promise<void> {
  let acks = 0;
  let killed = false;
  let failure: string | undefined;
  const sendNext = (session: string): void => {
    ledger.inFlight.set(session, true);
    child.sendSignal(session, textOf(session, ledger.acked.get(session) ?? 0));
  };
  const kill = (): void => {
    killed = true; // acknowledgements still in the pipe arrive too late to count
    child.kill();
  };
  child.onOutcome = (reply) => {
    if (killed) return;
    if (reply.status !== 'completed') failure ??= `signal ${reply.text} ended ${reply.status}: ${reply.error ?? ''}`;
    const expected = textOf(reply.session, ledger.acked.get(reply.session) ?? 0);
    if (reply.text !== expected) failure ??= `acknowledgement for ${reply.text}, expected one for ${expected}`;
    ledger.acked.set(reply.session, (ledger.acked.get(reply.session) ?? 0) + 1);
    ledger.inFlight.set(reply.session, false);
    acks++;
    if (acks >= killAfter) kill();
    else sendNext(reply.session);
  };
  for (const session of SESSIONS) sendNext(session);
  if (killAfter === 0) kill();
  const exit = await withinOrKill(child.exited, STEP_DEADLINE_MS, `${killAfter} acknowledgements and the kill`, child);
  expect(failure).toBeUndefined();
  expect(exit.signal, `the child died before the kill; stderr:\n${child.stderr}`).toBe('SIGKILL');
  // Every kill happened mid-stream: every session but the one whose acknowledgement triggered
  // the kill had a signal sent and not yet acknowledged.
  expect([...ledger.inFlight.values()].filter(Boolean).length).toBeGreaterThanOrEqual(SESSIONS.length - 1);
}

describe('crash safety: SIGKILL in the middle of a run', () => {
  it('every session keeps exactly its acknowledged signals (plus at most the one in flight) across repeated kills, with a consistent FSM state', async () => {
    const path = join(dir, 'crash.db');
    const ledger: Ledger = { acked: new Map(), inFlight: new Map() };
    let savedInFlight = 0;

    for (const killAfter of [0, 1, 7, 25, 60, 3]) {
      const child = new Child(path);
      await withinOrKill(child.ready, START_DEADLINE_MS, 'the child runner to start', child);
      savedInFlight += verify(ledger, await child.inspect(SESSIONS));
      await streamAndKill(child, ledger, killAfter);
      children.delete(child);
    }

    // A last runner on the same file: continues every session where the killed ones stopped.
    const child = new Child(path);
    await withinOrKill(child.ready, START_DEADLINE_MS, 'the last child runner to start', child);
    savedInFlight += verify(ledger, await child.inspect(SESSIONS));
    for (let round = 0; round < 3; round++) {
      const pending = new Set(SESSIONS);
      const done = new Promise<void>((resolve, reject) => {
        child.onOutcome = (reply) => {
          if (reply.status !== 'completed')
            reject(new Error(`signal ${reply.text} ended ${reply.status}: ${reply.error ?? ''}`));
          ledger.acked.set(reply.session, (ledger.acked.get(reply.session) ?? 0) + 1);
          pending.delete(reply.session);
          if (pending.size === 0) resolve();
        };
      });
      for (const session of SESSIONS) child.sendSignal(session, textOf(session, ledger.acked.get(session) ?? 0));
      await withinOrKill(done, STEP_DEADLINE_MS, 'the last runner to acknowledge a round of signals', child);
    }
    verify(ledger, await child.inspect(SESSIONS));
    const exit = await child.close(STEP_DEADLINE_MS);
    expect(exit.code, child.stderr).toBe(0);

    // And the file itself, read by this process: one checkpoint per session, as the runner wrote it.
    const store = new SqliteCheckpointStore({ path });
    try {
      for (const session of SESSIONS) {
        const n = ledger.acked.get(session) ?? 0;
        const checkpoint = await store.load(formatSessionKey(SessionKey.main('counter', session)));
        const data = checkpoint?.data as SessionCheckpointV1 | undefined;
        expect(checkpoint?.version).toBe(n);
        expect(data?.v).toBe(1);
        expect(data?.agentId).toBe('counter');
        expect(data?.strategy).toEqual({ type: 'fsm', current_state: n % 2 === 1 ? 'odd' : 'even' });
        expect(data?.history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(
          Array.from({ length: n }, (_, i) => textOf(session, i)),
        );
      }
      const keys: string[] = [];
      for await (const key of store.list('agent:counter:')) keys.push(key);
      expect(keys).toHaveLength(SESSIONS.length);
    } finally {
      await store.close();
    }
    // Not asserted (it depends on timing), but shows the test exercised both sides of the kill.
    console.info(
      `crash test: ${[...ledger.acked.values()].reduce((a, b) => a + b, 0)} signals applied; ${savedInFlight} in-flight signals were saved before their kill, the rest lost`,
    );
  }, 300_000);
});
