// Regression: `run()` never rejects because of what a stage did. A stage throwing a hostile value
// (a revoked Proxy, a Proxy whose every trap throws, an object whose `code` or `message` getter
// throws) used to make `run()` reject with the raw error while reading its message or code;
// a thenable whose `then` threw made a DAG run reject or wait forever. Each is now recorded as a
// stage failure like any other.
import { describe, expect, it } from 'vitest';
import { Kernel, type PipelineMode, type StageConfig } from '@signalyard/pipeline';
import { runtimeOf } from './support.js';

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** A Proxy whose every trap (get, has, getPrototypeOf, ownKeys, ...) throws. */
function trapsThrow(): object {
  const handler = new Proxy(
    {},
    {
      get: () => () => {
        throw new Error('trap');
      },
    },
  );
  return new Proxy({}, handler);
}

function throwingGetters(keys: readonly ('code' | 'message')[], base: object = {}): object {
  for (const key of keys) {
    Object.defineProperty(base, key, {
      enumerable: true,
      get() {
        throw new Error(`${key} getter`);
      },
    });
  }
  return base;
}

const hostile: readonly [string, () => unknown][] = [
  ['a revoked Proxy', revokedProxy],
  ['a Proxy whose every trap throws', trapsThrow],
  ['an object whose code getter throws', () => throwingGetters(['code'], { message: 'has a message' })],
  ['an Error whose code getter throws', () => throwingGetters(['code'], new Error('an error'))],
  ['an object whose message and code getters throw', () => throwingGetters(['code', 'message'])],
];

/** The ways a stage can hand over `value` as its failure. */
const ways: readonly [string, (value: () => unknown) => StageConfig['run']][] = [
  [
    'throws it',
    (value) => () => {
      throw value();
    },
  ],
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the point: a rejection that is not an Error
  ['rejects with it', (value) => () => Promise.reject(value())],
  ['returns it as its error field', (value) => () => ({ error: value() })],
  ['returns it as its output', (value) => () => value() as Record<string, unknown>],
];

const modes: readonly PipelineMode[] = ['sequential', 'parallel'];

describe('a stage failing with a hostile value', () => {
  describe.each(modes)('%s mode', (mode) => {
    describe.each(hostile)('%s', (_what, value) => {
      it.each(ways)('that %s is recorded as a stage failure; run() resolves', async (_how, make) => {
        const runtime = runtimeOf({
          stages: [
            { name: 'a', run: make(value), errorNext: 'b' },
            { name: 'b', run: () => ({}) },
          ],
        });
        const env = await runtime.run(null, { mode });
        expect(env.terminated).toBe(true);
        expect(env.errors).toHaveLength(1);
        expect(env.errors[0]).toMatchObject({ stage: 'a' });
        expect(typeof env.errors[0]!.error).toBe('string');
        // sequential mode goes on at errorNext; DAG mode does not route and ends stage_failed
        expect(env.terminalReason).toBe(mode === 'sequential' ? 'completed' : 'stage_failed');
      });
    });

    it('keeps a readable message and the code when only the other getter throws', async () => {
      const runtime = runtimeOf({
        stages: [
          {
            name: 'a',
            run: () => {
              throw throwingGetters(['message'], { code: 'E_STAGE' });
            },
          },
        ],
      });
      const env = await runtime.run(null, { mode });
      expect(env.errors[0]).toMatchObject({ stage: 'a', code: 'E_STAGE' });
      const noCode = await runtimeOf({
        stages: [
          {
            name: 'a',
            run: () => {
              throw throwingGetters(['code'], { message: 'it broke' });
            },
          },
        ],
      }).run(null, { mode });
      expect(noCode.errors[0]).toMatchObject({ stage: 'a', error: 'it broke' });
      expect(noCode.errors[0]!.code).toBeUndefined();
    });

    it('a thenable whose then throws, or whose then getter throws, fails the stage', async () => {
      const thenThrows = {
        then: () => {
          throw new Error('then exploded');
        },
      };
      const getterThrows = Object.defineProperty({}, 'then', {
        enumerable: true,
        get() {
          throw new Error('then getter exploded');
        },
      });
      for (const value of [thenThrows, getterThrows]) {
        const env = await runtimeOf({ stages: [{ name: 'a', run: () => value }] }).run(null, {
          mode,
        });
        expect(env).toMatchObject({ terminated: true, terminalReason: 'stage_failed' });
        expect(env.errors).toHaveLength(1);
      }
    });
  });

  it('a kernel process whose stage throws a revoked Proxy ends stage_failed; its result resolves', async () => {
    const kernel = new Kernel();
    kernel.registerService(
      's',
      runtimeOf({
        stages: [
          {
            name: 'a',
            run: () => {
              throw revokedProxy();
            },
          },
        ],
      }),
    );
    const env = await kernel.submit(null).result;
    expect(env).toMatchObject({ terminated: true, terminalReason: 'stage_failed' });
    expect(env.errors[0]).toMatchObject({ stage: 'a', error: 'an unreadable object (reading it threw)' });
  });

  it('the stream of such a run ends with end', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => {
            throw trapsThrow();
          },
        },
      ],
    });
    const types: string[] = [];
    for await (const event of runtime.stream(null)) types.push(event.type);
    expect(types).toEqual(['stage_start', 'stage_end', 'end']);
  });
});
