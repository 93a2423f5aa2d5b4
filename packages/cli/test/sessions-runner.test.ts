// The command and a Runner on the same SQLite file agree: the command lists and prints what the
// Runner's own listSessions and history give, its fork and rewind write what the Runner's would,
// and a Runner carries on with a session the command forked or rewound.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignalKind, signal, type SessionCheckpointV1 } from '@signalyard/core';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { collect } from '@signalyard/test-utils';
import { createRunner, type EngineFn, type Runner } from 'signalyard';
import { afterAll, describe, expect, it } from 'vitest';
import { lines, runInProcess } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-cli-runner-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const echo: EngineFn = async (ctx) => ({
  messages: [{ role: 'assistant', content: `echo ${ctx.history.at(-1)?.content ?? ''}` }],
});
const MAIN = 'agent:support:main';

let files = 0;
/** A file with `agent:support:main` after three user messages, and the Runner that wrote it (still open). */
async function served(): Promise<{ path: string; store: SqliteCheckpointStore; runner: Runner }> {
  const path = join(dir, `runner-${++files}.db`);
  const store = new SqliteCheckpointStore({ path });
  const runner = createRunner({ store, agents: [{ id: 'support', engine: echo }] });
  for (const text of ['one', 'two', 'three']) await runner.handle({ channel: 'cli', text });
  return { path, store, runner };
}

const cli = (path: string, args: readonly string[]) => runInProcess([...args, '--store', `sqlite:${path}`]);
const jsonLines = (text: string): unknown[] => lines(text).map((l) => JSON.parse(l) as unknown);

/** A checkpoint without the time of its cause (which differs between any two saves). */
function timeless(data: unknown): unknown {
  const { cause, ...rest } = data as SessionCheckpointV1;
  const { at: _at, ...why } = cause ?? { at: '' };
  return { ...rest, cause: why };
}

describe('the command and a Runner on the same store', () => {
  it('list and history print what listSessions and history give', async () => {
    const { path, store, runner } = await served();
    expect((await collect(runner.history(MAIN))).map((v) => v.version)).toEqual([3, 2, 1]);
    expect(jsonLines((await cli(path, ['sessions', 'list', '--json'])).stdout)).toEqual(
      await collect(runner.listSessions()),
    );
    expect(jsonLines((await cli(path, ['sessions', 'history', MAIN, '--json'])).stdout)).toEqual(
      await collect(runner.history(MAIN)),
    );
    await runner.close();
    await store.close();
  });

  it("fork and rewind write what the Runner's fork and rewind write", async () => {
    const { path, store, runner } = await served();
    await runner.fork(MAIN, 'agent:support:by-runner', { version: 2 });
    await runner.close();
    expect((await cli(path, ['sessions', 'fork', MAIN, 'agent:support:by-cli', '--version', '2'])).code).toBe(0);
    const byRunner = await store.load('agent:support:by-runner');
    const byCli = await store.load('agent:support:by-cli');
    expect(byCli?.version).toBe(byRunner?.version);
    expect(timeless(byCli?.data)).toEqual(timeless(byRunner?.data));

    // Rewind: the Runner first (version 4), then the command to the same version (version 5).
    const again = createRunner({ store, agents: [{ id: 'support', engine: echo }] });
    await again.rewind(MAIN, 1);
    await again.close();
    expect((await cli(path, ['sessions', 'rewind', MAIN, '1'])).code).toBe(0);
    const [cliRewind, runnerRewind] = await collect(store.history(MAIN, { limit: 2 }));
    expect([cliRewind?.version, runnerRewind?.version]).toEqual([5, 4]);
    expect(timeless(cliRewind?.data)).toEqual(timeless(runnerRewind?.data));
    await store.close();
  });

  it('a Runner carries on with a session the command forked', async () => {
    const { path, store, runner } = await served();
    await runner.close();
    expect((await cli(path, ['sessions', 'fork', MAIN, 'agent:support:what-if', '--version', '1'])).code).toBe(0);
    const next = createRunner({ store, agents: [{ id: 'support', engine: echo }] });
    const outcome = await next.dispatch('agent:support:what-if', signal(SignalKind.UserMessage, 'four'));
    expect(outcome.status).toBe('completed');
    const view = await next.session('agent:support:what-if');
    expect(view?.version).toBe(2);
    expect(view?.history.map((m) => m.content)).toEqual(['one', 'echo one', 'four', 'echo four']);
    const [latest, first] = await collect(next.history('agent:support:what-if'));
    expect(latest?.cause?.signal).toEqual({ kind: 'user_message', payload: 'four', text: 'four' });
    expect(first?.cause?.forkedFrom).toEqual({ sessionKey: MAIN, version: 1 });
    await next.close();
    await store.close();
  });
});
