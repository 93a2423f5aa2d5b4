import { describe, expect, it } from 'vitest';
import {
  MemoryCheckpointStore,
  SignalKind,
  signal,
  type CheckpointStore,
  type Clock,
  type SessionCheckpointV1,
} from '@signalyard/core';
import { collect } from '@signalyard/test-utils';
import {
  auditLogPlugin,
  createRunner,
  findSessionVersion,
  forkSession,
  listSessionCheckpoints,
  prepareFork,
  readSessionData,
  readSessionVersion,
  rewindSession,
  saveFork,
  type AuditEntry,
  type TurnContext,
} from 'signalyard';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);
/** A clock that reads `at` (ms) and can be moved. */
function fakeClock(at = T0): Clock & { at: number } {
  const clock = { at, now: () => clock.at };
  return clock;
}

const sessionOf = (agentId: string, text: string, extra: Record<string, unknown> = {}): SessionCheckpointV1 => ({
  v: 1,
  agentId,
  strategy: { type: 'direct' },
  history: [{ role: 'user', content: text }],
  engine: undefined,
  ...extra,
});

/** A store holding versions 1..n of `key` (`text-1` … `text-n`), the last with `extra`. */
async function seeded(n: number, extra: Record<string, unknown> = {}, key = 'agent:a:main') {
  const store = new MemoryCheckpointStore({ clock: fakeClock() });
  for (let v = 1; v <= n; v++) await store.save(key, sessionOf('a', `text-${v}`, v === n ? extra : {}), v - 1);
  return store;
}

describe('session history: listing and version lookup', () => {
  it('lists sessions in code-unit order after a cursor, with a prefix and a limit', async () => {
    const store = new MemoryCheckpointStore();
    for (const key of ['agent:b:main', 'agent:a:x', 'agent:a:main', 'agent:a:Z'])
      await store.save(key, sessionOf(key.split(':')[1] as string, 'hi'), 0);
    const keys = async (opts: Parameters<typeof listSessionCheckpoints>[1]) =>
      (await collect(listSessionCheckpoints(store, opts))).map((s) => s.sessionKey);
    expect(await keys({})).toEqual(['agent:a:Z', 'agent:a:main', 'agent:a:x', 'agent:b:main']);
    expect(await keys({ prefix: 'agent:a:', after: 'agent:a:Z', limit: 1 })).toEqual(['agent:a:main']);
    expect(await keys({ limit: 0 })).toEqual([]);
    expect(await keys({ prefix: 'agent:none:' })).toEqual([]);
  });

  it('finds the current and kept versions; a version above the current one or pruned is version_unavailable', async () => {
    const store = await seeded(4);
    const current = await store.load('agent:a:main');
    if (current === undefined) throw new Error('seeded');
    expect(await findSessionVersion(store, 'agent:a:main', current, 4)).toEqual({ ok: true, value: current });
    const kept = await findSessionVersion(store, 'agent:a:main', current, 2);
    expect(kept.ok && kept.value.version).toBe(2);
    expect(await findSessionVersion(store, 'agent:a:main', current, 9)).toEqual({
      ok: false,
      reason: 'version_unavailable',
      sessionKey: 'agent:a:main',
      version: 9,
      current: 4,
      oldest: 1,
    });
    const pruned = new MemoryCheckpointStore({ keepVersions: 1 });
    for (let v = 1; v <= 4; v++) await pruned.save('k', sessionOf('a', `t${v}`), v - 1);
    const now = await pruned.load('k');
    if (now === undefined) throw new Error('saved');
    expect(await findSessionVersion(pruned, 'k', now, 1)).toMatchObject({ ok: false, oldest: 3 });
  });

  it('reads a version decoded; a missing session is not_found, a foreign document unreadable', async () => {
    const store = await seeded(2);
    const read = await readSessionVersion(store, 'agent:a:main', 1);
    expect(read.ok && read.value.data.history).toEqual([{ role: 'user', content: 'text-1' }]);
    expect(await readSessionVersion(store, 'agent:a:none', undefined)).toEqual({
      ok: false,
      reason: 'not_found',
      sessionKey: 'agent:a:none',
    });
    await store.save('agent:a:odd', { v: 2 }, 0);
    expect(await readSessionVersion(store, 'agent:a:odd', undefined)).toMatchObject({
      ok: false,
      reason: 'unreadable',
      badEntry: false,
    });
    expect(readSessionData('k', { ...sessionOf('a', 'x'), history: [{ role: 'robot', content: 'b' }] })).toMatchObject({
      ok: false,
      reason: 'unreadable',
      sessionKey: 'k',
      badEntry: true,
    });
  });
});

describe('session history: fork and rewind', () => {
  it('forks a version into a new session at version 1, without the inbox position, stamped by the clock', async () => {
    const outcomes = [
      { receiptId: 'r-7', seq: '7', outcome: { sessionKey: 'agent:a:main', agentId: 'a', status: 'completed' } },
    ];
    const store = await seeded(3, {
      inboxSeq: '7',
      inboxPartial: { seq: '8', receiptId: 'r' },
      inboxOutcomes: outcomes,
      future: 1,
    });
    const clock = fakeClock(T0 + 1000);
    const to = { key: 'agent:a:copy', agentId: 'a' };
    const forked = await forkSession(store, 'agent:a:main', to, undefined, { clock });
    expect(forked.ok).toBe(true);
    const data = (await store.load('agent:a:copy'))?.data as Record<string, unknown>;
    expect(data).not.toHaveProperty('inboxSeq');
    expect(data).not.toHaveProperty('inboxPartial');
    expect(data).not.toHaveProperty('inboxOutcomes');
    expect(data).toMatchObject({
      future: 1,
      cause: { at: new Date(T0 + 1000).toISOString(), forkedFrom: { sessionKey: 'agent:a:main', version: 3 } },
    });
    expect(forked.ok && forked.value).toMatchObject({ version: 1, from: 3 });
    // Into it again: exists, nothing written.
    expect(await forkSession(store, 'agent:a:main', to, 1)).toEqual({
      ok: false,
      reason: 'exists',
      sessionKey: 'agent:a:copy',
    });
    expect((await store.load('agent:a:copy'))?.version).toBe(1);
  });

  it('refuses a fork across agents, from a missing session, or of a version not kept; prepareFork writes nothing', async () => {
    const store = await seeded(2);
    expect(await prepareFork(store, 'agent:a:main', { key: 'agent:b:x', agentId: 'b' }, undefined)).toEqual({
      ok: false,
      reason: 'agent_mismatch',
      sessionKey: 'agent:b:x',
      agentId: 'a',
    });
    expect(await prepareFork(store, 'agent:a:none', { key: 'agent:a:x', agentId: 'a' }, undefined)).toMatchObject({
      reason: 'not_found',
      sessionKey: 'agent:a:none',
    });
    expect(await prepareFork(store, 'agent:a:main', { key: 'agent:a:x', agentId: 'a' }, 5)).toMatchObject({
      reason: 'version_unavailable',
    });
    const prepared = await prepareFork(store, 'agent:a:main', { key: 'agent:a:x', agentId: 'a' }, 1);
    expect(prepared.ok).toBe(true);
    expect(await store.load('agent:a:x')).toBeUndefined();
    if (!prepared.ok) return;
    const saved = await saveFork(store, 'agent:a:x', prepared.value);
    expect(saved.ok && saved.value.version).toBe(1);
  });

  it("rewinds to a kept version as a new version, keeping the current version's inboxSeq and inboxOutcomes", async () => {
    const outcomes = [
      { receiptId: 'r-12', seq: '12', outcome: { sessionKey: 'agent:a:main', agentId: 'a', status: 'completed' } },
    ];
    const store = await seeded(3, {
      inboxSeq: '12',
      inboxPartial: { seq: '13', receiptId: 'r' },
      inboxOutcomes: outcomes,
    });
    const rewound = await rewindSession(store, 'agent:a:main', 1, { clock: fakeClock(T0 + 5) });
    expect(rewound.ok && rewound.value).toMatchObject({ version: 4, from: 1 });
    const data = (await store.load('agent:a:main'))?.data as Record<string, unknown>;
    expect(data).toMatchObject({
      inboxSeq: '12',
      inboxOutcomes: outcomes,
      history: [{ role: 'user', content: 'text-1' }],
      cause: { at: new Date(T0 + 5).toISOString(), rewoundTo: 1 },
    });
    expect(data).not.toHaveProperty('inboxPartial');
    // A session with no inboxSeq gets none.
    const plain = await seeded(2, {}, 'agent:a:plain');
    await rewindSession(plain, 'agent:a:plain', 1);
    expect((await plain.load('agent:a:plain'))?.data).not.toHaveProperty('inboxSeq');
    expect((await plain.load('agent:a:plain'))?.data).not.toHaveProperty('inboxOutcomes');
  });

  it('a rewind losing to another writer is a conflict carrying the store error; bad targets are refused', async () => {
    const inner = await seeded(2);
    const racing: CheckpointStore = {
      load: (k) => inner.load(k),
      list: (p) => inner.list(p),
      delete: (k) => inner.delete(k),
      history: (k, o) => inner.history(k, o),
      loadVersion: (k, v) => inner.loadVersion(k, v),
      save: async (k, d, v) => {
        await inner.save(k, sessionOf('a', 'meanwhile'), v);
        return inner.save(k, d, v);
      },
    };
    const lost = await rewindSession(racing, 'agent:a:main', 1);
    expect(lost).toMatchObject({ ok: false, reason: 'conflict', sessionKey: 'agent:a:main' });
    expect(!lost.ok && lost.reason === 'conflict' && lost.error.code).toBe('CHECKPOINT_CONFLICT');
    expect(await rewindSession(inner, 'agent:a:none', 1)).toMatchObject({ reason: 'not_found' });
    expect(await rewindSession(inner, 'agent:a:main', 9)).toMatchObject({ reason: 'version_unavailable' });
  });
});

describe('createRunner({ clock })', () => {
  it('stamps causes, the default store, the timeline, engines and plugins with the one clock', async () => {
    const clock = fakeClock();
    const seen: TurnContext[] = [];
    const audit: AuditEntry[] = [];
    const runner = createRunner({
      clock,
      timeline: true,
      plugins: [auditLogPlugin((e) => audit.push(e))],
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            seen.push(ctx);
            return {};
          },
        },
      ],
    });
    await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'hi'));
    const at = new Date(T0).toISOString();
    const [version] = await collect(runner.history('agent:main:main'));
    expect(version).toMatchObject({ updatedAt: at, cause: { at } });
    expect(seen[0]?.clock).toBe(clock);
    expect(audit[0]?.at).toBe(at);
    expect(runner.timeline('agent:main:main').every((e) => e.at === at)).toBe(true);
    clock.at = T0 + 60_000;
    const fork = await runner.fork('agent:main:main', 'agent:main:other');
    expect(fork.version).toBe(1);
    const [forked] = await collect(runner.history('agent:main:other'));
    expect(forked?.cause?.at).toBe(new Date(T0 + 60_000).toISOString());
    await runner.close();
  });

  it('the default clock is read once per signal: the memory store stamps the save with the reading of the cause', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: async () => ({}) }] });
    for (let i = 0; i < 20; i++) await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, `m${i}`));
    for await (const version of runner.history('agent:main:main')) expect(version.updatedAt).toBe(version.cause?.at);
    await runner.close();
  });

  it('a clock of the app itself is read for the cause and again for the save, as the store reads it', async () => {
    let ms = T0;
    const ticking: Clock = { now: () => (ms += 1000) }; // one second further at every read
    const runner = createRunner({ clock: ticking, agents: [{ id: 'main', engine: async () => ({}) }] });
    await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'hi'));
    const [version] = await collect(runner.history('agent:main:main'));
    expect(Date.parse(version?.updatedAt ?? '') - Date.parse(version?.cause?.at ?? '')).toBe(1000);
    await runner.close();
  });

  it('refuses a clock that is not one', () => {
    expect(() => createRunner({ clock: {} as Clock, agents: [{ id: 'main', engine: async () => ({}) }] })).toThrow(
      /clock/,
    );
  });
});
