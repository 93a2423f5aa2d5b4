import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '@signalyard/core';
import { frozenJsonHistory, frozenJsonValue } from '@signalyard/core/internal';
import { collect } from './helpers.js';

// The memory store keeps a frozen JSON history (a Runner's) in one log per key, shared by the
// versions that have messages in common: every read still returns what was saved.

interface Message {
  readonly role: string;
  readonly content: string;
}

const message = (content: string): Message => frozenJsonValue({ role: 'user', content });

/** `base` with `add` new messages, the newest `max` kept, linked to `base` as a Runner's appendHistory links it. */
function extended(base: readonly Message[], add: number, max: number, next: () => Message): readonly Message[] {
  const all = [...base];
  for (let i = 0; i < add; i++) all.push(next());
  const dropped = Math.max(0, all.length - max);
  return frozenJsonHistory(all.slice(dropped), base, dropped);
}

/** How the next history is made from the last one. */
type Step =
  | { kind: 'append'; add: number; max: number }
  | { kind: 'linked'; add: number; max: number; via: boolean }
  | { kind: 'stale'; back: number; add: number; max: number }
  | { kind: 'rewind'; back: number }
  | { kind: 'fresh'; length: number }
  | { kind: 'same' }
  | { kind: 'repeat'; length: number }
  | { kind: 'plain'; length: number }
  | { kind: 'unmarked' };

const steps = fc.array(
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant('append' as const),
        add: fc.integer({ min: 0, max: 3 }),
        max: fc.integer({ min: 1, max: 8 }),
      }),
    },
    {
      // Linked to the history it extends (a Runner's), directly or through one not saved.
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant('linked' as const),
        add: fc.integer({ min: 0, max: 3 }),
        max: fc.integer({ min: 1, max: 8 }),
        via: fc.boolean(),
      }),
    },
    {
      // Linked to an older history than the one logged last.
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('stale' as const),
        back: fc.integer({ min: 1, max: 6 }),
        add: fc.integer({ min: 0, max: 3 }),
        max: fc.integer({ min: 1, max: 8 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('rewind' as const), back: fc.integer({ min: 1, max: 6 }) }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('fresh' as const), length: fc.integer({ min: 0, max: 5 }) }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'same' as const }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('repeat' as const), length: fc.integer({ min: 1, max: 8 }) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('plain' as const), length: fc.integer({ min: 0, max: 4 }) }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'unmarked' as const }) },
  ),
  { minLength: 1, maxLength: 60 },
);

describe('MemoryCheckpointStore: histories shared between versions', () => {
  it('load, loadVersion and history return every kept version as saved, whatever the histories', async () => {
    await fc.assert(
      fc.asyncProperty(steps, fc.integer({ min: 0, max: 6 }), async (plan: Step[], keepVersions) => {
        const store = new MemoryCheckpointStore({ keepVersions });
        const saved: unknown[] = []; // JSON of each version's data, version v at v - 1
        const histories: (readonly Message[])[] = [];
        let last: readonly Message[] = frozenJsonValue([]);
        let n = 0;
        for (const step of plan) {
          let history: readonly Message[] = last;
          let data: unknown;
          switch (step.kind) {
            case 'append': {
              const next = [...last];
              for (let i = 0; i < step.add; i++) next.push(message(`m${n++}`));
              history = frozenJsonValue(next.slice(Math.max(0, next.length - step.max)));
              break;
            }
            case 'linked': {
              const base = step.via ? extended(last, 1, step.max, () => message(`m${n++}`)) : last;
              history = extended(base, step.add, step.max, () => message(`m${n++}`));
              break;
            }
            case 'stale': {
              const base = histories[Math.max(0, histories.length - step.back)] ?? last;
              history = extended(base, step.add, step.max, () => message(`m${n++}`));
              break;
            }
            case 'rewind':
              history = histories[Math.max(0, histories.length - step.back)] ?? last;
              break;
            case 'fresh':
              history = frozenJsonValue(Array.from({ length: step.length }, () => message(`m${n++}`)));
              break;
            case 'same':
              break;
            case 'repeat': {
              // The same message object several times: overlaps must still be found exactly.
              const one = last[last.length - 1] ?? message(`m${n++}`);
              history = frozenJsonValue([...last, ...Array.from({ length: step.length }, () => one)]);
              break;
            }
            case 'plain':
              // A history that is not a frozen JSON list is kept as it is.
              history = Array.from({ length: step.length }, () => ({ role: 'user', content: `p${n++}` }));
              break;
            case 'unmarked':
              data = { v: 1, note: 'no history', at: n++ };
              break;
          }
          // In turn: a session checkpoint's record (with and without an engine state), another
          // shared record (frozen and marked), and an owned one (copied by the store).
          const strategy = frozenJsonValue({ type: 'fsm', current_state: `s${n % 3}` });
          const cause = frozenJsonValue({ n });
          data ??= [
            () => frozenJsonValue({ v: 1, agentId: 'a', strategy, history, cause }),
            () => frozenJsonValue({ v: 1, agentId: 'a', strategy, history, engine: n, cause }),
            () => frozenJsonValue({ v: 1, agentId: 'a', history, cause }),
            () => ({ v: 1, agentId: 'a', history, engine: { n } }),
          ][n % 4]!();
          await store.save('k', data, saved.length);
          saved.push(JSON.parse(JSON.stringify(data)));
          if (Object.isFrozen(history)) {
            histories.push(history);
            last = history;
          }
        }
        const latest = saved.length;
        expect((await store.load('k'))?.data).toEqual(saved[latest - 1]);
        const oldest = Math.max(1, latest - keepVersions);
        for (let v = 1; v <= latest; v++) {
          const read = await store.loadVersion('k', v);
          if (v < oldest) expect(read).toBeUndefined();
          else expect(read?.data).toEqual(saved[v - 1]);
        }
        const listed = await collect(store.history('k'));
        expect(listed.map((c) => c.version)).toEqual(Array.from({ length: latest - oldest + 1 }, (_, i) => latest - i));
        for (const c of listed) expect(c.data).toEqual(saved[c.version - 1]);
      }),
      { numRuns: 300 },
    );
  });

  it.each([0, 1, 3])(
    'a history growing past what the log holds keeps every message (keepVersions %i)',
    async (keepVersions) => {
      const store = new MemoryCheckpointStore({ keepVersions });
      let history: readonly Message[] = frozenJsonValue([]);
      for (let v = 0; v < 70; v++) {
        history = frozenJsonValue([...history, message(`m${v}`)]);
        await store.save('k', frozenJsonValue({ v: 1, history }), v);
        const read = (await store.load('k'))?.data as { history: Message[] };
        expect(read.history.map((m) => m.content)).toEqual(history.map((m) => m.content));
      }
      const versions = await collect(store.history('k'));
      for (const c of versions) expect((c.data as { history: Message[] }).history).toHaveLength(c.version);
    },
  );

  it('keeps the key order of the saved data, the history in its place', async () => {
    const store = new MemoryCheckpointStore();
    const history = frozenJsonValue([message('a')]);
    await store.save('k', frozenJsonValue({ v: 1, history, z: 1, a: 2 }), 0);
    await store.save('k', { first: true, history: frozenJsonValue([...history, message('b')]), last: 1 }, 1);
    expect(Object.keys((await store.loadVersion('k', 1))?.data as object)).toEqual(['v', 'history', 'z', 'a']);
    expect(Object.keys((await store.load('k'))?.data as object)).toEqual(['first', 'history', 'last']);
  });

  it('hands out fresh copies: changing one changes no version kept', async () => {
    const store = new MemoryCheckpointStore();
    const history = frozenJsonValue([message('a'), message('b')]);
    await store.save('k', frozenJsonValue({ v: 1, history }), 0);
    const read = (await store.load('k'))?.data as { history: { content: string }[] };
    read.history[0]!.content = 'changed';
    read.history.push({ content: 'more' });
    expect((await store.load('k'))?.data).toEqual({
      v: 1,
      history: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ],
    });
  });

  it('a history iteration sees the versions as they were when it began, while saves go on', async () => {
    const store = new MemoryCheckpointStore({ keepVersions: 2 });
    let history: readonly Message[] = frozenJsonValue([]);
    let version = 0;
    const save = async () => {
      history = frozenJsonValue([...history.slice(-3), message(`m${version}`)]);
      await store.save('k', frozenJsonValue({ v: 1, history }), version++);
    };
    for (let i = 0; i < 3; i++) await save();
    const seen: unknown[] = [];
    for await (const c of store.history('k')) {
      seen.push([c.version, (c.data as { history: Message[] }).history.map((m) => m.content)]);
      for (let i = 0; i < 20; i++) await save(); // the log wraps and grows meanwhile
    }
    expect(seen).toEqual([
      [3, ['m0', 'm1', 'm2']],
      [2, ['m0', 'm1']],
      [1, ['m0']],
    ]);
  });
});
