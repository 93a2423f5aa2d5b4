import { AbortedError, ConfigError, SignalyardError, isSignalyardError, type SessionLock } from '@signalyard/core';
import {
  PostgresLockError,
  PostgresSessionLock,
  type PostgresLockErrorCode,
  type PostgresSessionLockOptions,
} from '@signalyard/store-postgres';
import { Client } from 'pg';
import { afterAll, afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { DATABASE_URL, adminPool, describePostgres, dropTablesAndEnd } from '@signalyard/test-utils/postgres';
import { deferred, rejection } from '@signalyard/test-utils';

/** Generous bound for conditions that depend on the server (a busy CI machine). */
const WAIT = { timeout: 20_000, interval: 5 };

const open: { close(): Promise<void> }[] = [];
function lock(options: PostgresSessionLockOptions): PostgresSessionLock {
  const l = new PostgresSessionLock(options);
  open.push(l);
  return l;
}
const clients: Client[] = [];
/** A connected client of the test's own, ended after the test. */
async function client(): Promise<Client> {
  const c = new Client({ connectionString: DATABASE_URL });
  c.on('error', () => undefined);
  clients.push(c);
  await c.connect();
  return c;
}
afterEach(async () => {
  for (const l of open.splice(0).reverse()) await l.close();
  for (const c of clients.splice(0)) await c.end().catch(() => undefined);
});
afterAll(async () => {
  await dropTablesAndEnd([]);
});

let keyCount = 0;
/** A lock key no other test (or test run) uses. */
const freshKey = (): string => `agent:lock-test:${process.pid}-${Date.now()}-${++keyCount}`;

/** The backend pids holding the advisory lock of `key`, as the server sees it. */
async function holders(key: string): Promise<number[]> {
  const { rows } = await adminPool().query<{ pid: number }>(
    `SELECT pid FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND objsubid = 1
        AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
    [key],
  );
  return rows.map((r) => r.pid);
}

/**
 * A client whose try-lock answers are counted: `refusals()` says how many times the server
 * refused this client the lock (so a test knows a call is really waiting, without sleeping).
 */
async function countingClient(): Promise<{ client: Client; refusals: () => number; tries: () => number }> {
  const c = await client();
  let refusals = 0;
  let tries = 0;
  const query = c.query.bind(c) as (config: { text: string }) => Promise<{ rows: unknown[][] }>;
  vi.spyOn(c, 'query').mockImplementation((async (config: { text: string }) => {
    const result = await query(config);
    if (config.text.includes('pg_try_advisory_lock')) {
      tries++;
      if (result.rows[0]?.[0] === false) refusals++;
    }
    return result;
  }) as never);
  return { client: c, refusals: () => refusals, tries: () => tries };
}

const one = async (): Promise<number> => 1;

describe('new PostgresSessionLock(options): validation (no server needed)', () => {
  it('refuses bad options with one ConfigError listing every problem', () => {
    let error: unknown;
    try {
      new PostgresSessionLock({
        connectionString: '',
        retryMinMs: 0,
        retryMaxMs: -1,
        acquireTimeoutMs: 1.5,
        retries: 3,
      } as unknown as PostgresSessionLockOptions);
    } catch (e) {
      error = e;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems.map((p) => p.path)).toEqual([
      'connectionString',
      'retryMinMs',
      'retryMaxMs',
      'acquireTimeoutMs',
      'retries',
    ]);
  });

  it.each([
    ['no options', undefined, ''],
    ['null', null, ''],
    ['neither connectionString nor client', {}, 'connectionString'],
    ['both', { connectionString: DATABASE_URL, client: new Client() }, 'client'],
    ['a client that is not one', { client: { query: () => 1 } }, 'client'],
    ['retryMaxMs below retryMinMs', { connectionString: DATABASE_URL, retryMinMs: 50, retryMaxMs: 10 }, 'retryMaxMs'],
    ['acquireTimeoutMs below 0', { connectionString: DATABASE_URL, acquireTimeoutMs: -1 }, 'acquireTimeoutMs'],
    [
      'acquireTimeoutMs beyond what setTimeout honours',
      { connectionString: DATABASE_URL, acquireTimeoutMs: 2 ** 31 },
      'acquireTimeoutMs',
    ],
    ['acquireTimeoutMs NaN', { connectionString: DATABASE_URL, acquireTimeoutMs: Number.NaN }, 'acquireTimeoutMs'],
    ['acquireTimeoutMs -Infinity', { connectionString: DATABASE_URL, acquireTimeoutMs: -Infinity }, 'acquireTimeoutMs'],
  ])('refuses %s with CONFIG_INVALID naming the option', (_, options, path) => {
    let error: unknown;
    try {
      new PostgresSessionLock(options as PostgresSessionLockOptions);
    } catch (e) {
      error = e;
    }
    expect(isSignalyardError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as ConfigError).problems.map((p) => p.path)).toEqual([path]);
  });

  it('accepts acquireTimeoutMs from 0 to 2147483647, and Infinity (no limit)', () => {
    for (const acquireTimeoutMs of [0, 1, 2 ** 31 - 1, Infinity]) {
      expect(new PostgresSessionLock({ connectionString: DATABASE_URL, acquireTimeoutMs })).toBeInstanceOf(
        PostgresSessionLock,
      );
    }
  });

  it.each([
    ['an empty key', '', one, undefined, 'non-empty string'],
    ['a number key', 42, one, undefined, 'non-empty string'],
    ['a key with a NUL', 'a\u0000b', one, undefined, 'NUL character at index 1'],
    ['a key with a lone surrogate', 'x\ud800', one, undefined, 'lone surrogate at index 1'],
    ['fn not a function', 'k', 'run me', undefined, 'expected a function'],
    ['options not an object', 'k', one, 'fast', 'expected { abortSignal? }'],
    ['an abortSignal that is not one', 'k', one, { abortSignal: { aborted: false } }, 'expected an AbortSignal'],
  ])('withLock refuses %s with POSTGRES_LOCK_INPUT_INVALID, before any connection', async (_, key, fn, opts, text) => {
    const l = lock({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    const error = await rejection(
      l.withLock(key as string, fn as () => Promise<number>, opts as { abortSignal?: AbortSignal }),
    );
    expect(PostgresLockError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'POSTGRES_LOCK_INPUT_INVALID' });
    expect((error as Error).message).toContain(text);
  });

  it('rejects with AbortedError at once for an already-aborted signal, and fn never runs', async () => {
    const l = lock({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    const controller = new AbortController();
    controller.abort('caller gave up');
    const fn = vi.fn(async () => 1);
    const error = await rejection(l.withLock('k', fn, { abortSignal: controller.signal }));
    expect(AbortedError.isInstance(error)).toBe(true);
    expect((error as Error).cause).toBe('caller gave up');
    expect(fn).not.toHaveBeenCalled();
  });

  it('rejects with POSTGRES_LOCK_FAILED (and the socket code) when the server cannot be reached; fn never runs', async () => {
    const l = lock({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    const fn = vi.fn(async () => 1);
    const error = await rejection(l.withLock('k', fn));
    expect(error).toMatchObject({ code: 'POSTGRES_LOCK_FAILED', pgCode: 'ECONNREFUSED', key: 'k' });
    expect(fn).not.toHaveBeenCalled();
    // The next call tries again (and fails again here), rather than reusing a dead connection.
    expect(await rejection(l.withLock('k', fn))).toMatchObject({ code: 'POSTGRES_LOCK_FAILED' });
  });

  it('close() before any use resolves; later calls reject with POSTGRES_LOCK_CLOSED', async () => {
    const l = new PostgresSessionLock({ connectionString: DATABASE_URL });
    await l.close();
    await l.close();
    const error = await rejection(l.withLock('k', async () => 1));
    expect(error).toMatchObject({ code: 'POSTGRES_LOCK_CLOSED', key: 'k' });
  });
});

describePostgres('PostgresSessionLock on a real server', () => {
  describe('exclusion', () => {
    it('two lock instances (two connections, as two processes) never run fn for one key at once', async () => {
      const a = lock({ connectionString: DATABASE_URL });
      const b = await countingClient();
      const lockB = lock({ client: b.client, retryMinMs: 1, retryMaxMs: 5 });
      const key = freshKey();
      const release = deferred();
      const log: string[] = [];
      const first = a.withLock(key, async () => {
        log.push('a start');
        await release.promise;
        log.push('a end');
        return 'a';
      });
      await vi.waitFor(() => expect(log).toEqual(['a start']), WAIT);
      const second = lockB.withLock(key, async () => {
        log.push('b start');
        return 'b';
      });
      await vi.waitFor(() => expect(b.refusals()).toBeGreaterThanOrEqual(2), WAIT);
      expect(log).toEqual(['a start']);
      release.resolve();
      expect(await first).toBe('a');
      expect(await second).toBe('b');
      expect(log).toEqual(['a start', 'a end', 'b start']);
    });

    it('different keys do not exclude each other, and many sessions share the one lock connection', async () => {
      const l = lock({ connectionString: DATABASE_URL });
      const keys = Array.from({ length: 40 }, freshKey);
      const release = deferred();
      let running = 0;
      const all = Promise.all(
        keys.map((key) =>
          l.withLock(key, async () => {
            running++;
            await release.promise;
            return key;
          }),
        ),
      );
      await vi.waitFor(() => expect(running).toBe(keys.length), WAIT);
      const pids = new Set((await Promise.all(keys.map(holders))).flat());
      expect(pids.size).toBe(1);
      const { rows } = await adminPool().query(`SELECT application_name FROM pg_stat_activity WHERE pid = $1`, [
        [...pids][0],
      ]);
      expect(rows[0]).toEqual({ application_name: 'signalyard-session-lock' });
      release.resolve();
      expect(await all).toEqual(keys);
    });

    it('regression: calls for one key in one process take turns in call order (advisory locks alone are re-entrant per connection)', async () => {
      const l = lock({ connectionString: DATABASE_URL });
      const key = freshKey();
      const gates = [deferred(), deferred(), deferred()];
      const log: string[] = [];
      let inside = 0;
      let most = 0;
      const calls = gates.map((gate, i) =>
        l.withLock(key, async () => {
          inside++;
          most = Math.max(most, inside);
          log.push(`start ${i}`);
          await gate.promise;
          log.push(`end ${i}`);
          inside--;
          return i;
        }),
      );
      await vi.waitFor(() => expect(log).toEqual(['start 0']), WAIT);
      gates[2]!.resolve();
      gates[1]!.resolve();
      gates[0]!.resolve();
      expect(await Promise.all(calls)).toEqual([0, 1, 2]);
      expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
      expect(most).toBe(1);
      expect(await holders(key)).toEqual([]);
    });
  });

  describe('release', () => {
    it('releases the lock when withLock returns, and when fn throws (its error passes through unchanged)', async () => {
      const l = lock({ connectionString: DATABASE_URL });
      const key = freshKey();
      let held: number[] = [];
      expect(
        await l.withLock(key, async () => {
          held = await holders(key);
          return 'done';
        }),
      ).toBe('done');
      expect(held).toHaveLength(1);
      expect(await holders(key)).toEqual([]);
      const boom = new Error('engine failed');
      expect(await rejection(l.withLock(key, async () => Promise.reject(boom)))).toBe(boom);
      expect(await holders(key)).toEqual([]);
      const sync = new TypeError('not even async');
      expect(
        await rejection(
          l.withLock(key, () => {
            throw sync;
          }),
        ),
      ).toBe(sync);
      expect(await holders(key)).toEqual([]);
    });

    it('the server releases the locks of a holder whose connection is terminated (pg_terminate_backend), and the holder recovers', async () => {
      const a = lock({ connectionString: DATABASE_URL });
      const b = lock({ connectionString: DATABASE_URL, retryMinMs: 1, retryMaxMs: 20 });
      const key = freshKey();
      const release = deferred();
      let aRunning = false;
      const first = a.withLock(key, async () => {
        aRunning = true;
        await release.promise;
        return 'a finished';
      });
      await vi.waitFor(() => expect(aRunning).toBe(true), WAIT);
      const [pid] = await holders(key);
      expect(pid).toBeTypeOf('number');
      const second = b.withLock(key, async () => 'b took over');
      await adminPool().query('SELECT pg_terminate_backend($1)', [pid]);
      expect(await second).toBe('b took over');
      release.resolve();
      // A is told it lost the lock (see 'losing the lock while fn runs'), even though its fn resolved.
      expect(await rejection(first)).toMatchObject({ code: 'POSTGRES_LOCK_LOST', key });
      // A reconnects for its next call.
      expect(await a.withLock(key, async () => (await holders(key)).length)).toBe(1);
      expect(await holders(key)).toEqual([]);
    });

    it('with a client of yours that was lost, later calls reject with POSTGRES_LOCK_FAILED', async () => {
      const c = await client();
      const l = lock({ client: c });
      const key = freshKey();
      expect(await l.withLock(key, async () => 1)).toBe(1);
      const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await adminPool().query('SELECT pg_terminate_backend($1)', [pid]);
      await vi.waitFor(
        async () =>
          expect(await rejection(l.withLock(key, async () => 2))).toMatchObject({ code: 'POSTGRES_LOCK_FAILED', key }),
        WAIT,
      );
    });
  });

  describe('abortSignal and deadlines', () => {
    it('a call waiting on another process rejects with AbortedError when its abortSignal fires, and fn never runs', async () => {
      const a = lock({ connectionString: DATABASE_URL });
      const b = await countingClient();
      const lockB = lock({ client: b.client, retryMinMs: 1, retryMaxMs: 5 });
      const key = freshKey();
      const release = deferred();
      let aRunning = false;
      const first = a.withLock(key, async () => {
        aRunning = true;
        await release.promise;
      });
      await vi.waitFor(() => expect(aRunning).toBe(true), WAIT);
      const controller = new AbortController();
      const fn = vi.fn(async () => 'never');
      const waiting = lockB.withLock(key, fn, { abortSignal: controller.signal });
      await vi.waitFor(() => expect(b.refusals()).toBeGreaterThanOrEqual(2), WAIT);
      controller.abort('user pressed stop');
      const error = await rejection(waiting);
      expect(AbortedError.isInstance(error)).toBe(true);
      expect((error as AbortedError).code).toBe('ABORTED');
      expect((error as Error).cause).toBe('user pressed stop');
      expect((error as Error).message).toContain(JSON.stringify(key));
      expect(fn).not.toHaveBeenCalled();
      release.resolve();
      await first;
      // B holds nothing after the abort, and takes the lock normally afterwards.
      expect(await holders(key)).toEqual([]);
      expect(await lockB.withLock(key, async () => 'b')).toBe('b');
    });

    it('a call waiting behind another call of the same process rejects with AbortedError when aborted, and the line moves on', async () => {
      const l = lock({ connectionString: DATABASE_URL });
      const key = freshKey();
      const release = deferred();
      let firstRunning = false;
      const first = l.withLock(key, async () => {
        firstRunning = true;
        await release.promise;
        return 1;
      });
      await vi.waitFor(() => expect(firstRunning).toBe(true), WAIT);
      const controller = new AbortController();
      const aborted = l.withLock(key, async () => 2, { abortSignal: controller.signal });
      const third = l.withLock(key, async () => 3);
      controller.abort();
      expect(AbortedError.isInstance(await rejection(aborted))).toBe(true);
      release.resolve();
      expect(await first).toBe(1);
      expect(await third).toBe(3);
    });

    it('rejects with POSTGRES_LOCK_TIMEOUT after acquireTimeoutMs while another process holds the key', async () => {
      const a = lock({ connectionString: DATABASE_URL });
      const b = lock({ connectionString: DATABASE_URL, acquireTimeoutMs: 50, retryMinMs: 1, retryMaxMs: 10 });
      const key = freshKey();
      const release = deferred();
      let aRunning = false;
      const first = a.withLock(key, async () => {
        aRunning = true;
        await release.promise;
      });
      await vi.waitFor(() => expect(aRunning).toBe(true), WAIT);
      const fn = vi.fn(async () => 1);
      const error = await rejection(b.withLock(key, fn));
      expect(PostgresLockError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'POSTGRES_LOCK_TIMEOUT', key });
      expect(fn).not.toHaveBeenCalled();
      release.resolve();
      await first;
      expect(await b.withLock(key, fn)).toBe(1);
    });
    it('a free lock is taken even with acquireTimeoutMs 0: the deadline only ends waiting', async () => {
      const l = lock({ connectionString: DATABASE_URL, acquireTimeoutMs: 0 });
      const key = freshKey();
      expect(await l.withLock(key, async () => 'ran')).toBe('ran');
      expect(await l.withLock(key, async () => 'again')).toBe('again');
    });
  });

  describe('losing the lock while fn runs', () => {
    /** The backend pid of the lock connection holding `key`. */
    async function holderPid(key: string): Promise<number> {
      const [pid] = await holders(key);
      if (pid === undefined) throw new Error(`nobody holds ${key}`);
      return pid;
    }

    it("terminating the holder's backend fires fn's lockSignal, withLock rejects with POSTGRES_LOCK_LOST though fn resolves, and another process takes the key", async () => {
      const a = lock({ connectionString: DATABASE_URL });
      const b = await countingClient();
      const lockB = lock({ client: b.client, retryMinMs: 1, retryMaxMs: 20 });
      const key = freshKey();
      const release = deferred();
      let lockSignal: AbortSignal | undefined;
      const first = a.withLock(key, async (signal) => {
        lockSignal = signal;
        await release.promise;
        return 'a finished';
      });
      await vi.waitFor(() => expect(lockSignal).toBeInstanceOf(AbortSignal), WAIT);
      expect(lockSignal?.aborted).toBe(false);
      let bRan = false;
      const second = lockB.withLock(key, async () => {
        bRan = true;
        return 'b took over';
      });
      await vi.waitFor(() => expect(b.refusals()).toBeGreaterThanOrEqual(1), WAIT);
      await adminPool().query('SELECT pg_terminate_backend($1)', [await holderPid(key)]);

      await vi.waitFor(() => expect(lockSignal?.aborted).toBe(true), WAIT);
      const reason: unknown = lockSignal?.reason;
      expect(PostgresLockError.isInstance(reason)).toBe(true);
      expect(reason).toMatchObject({ code: 'POSTGRES_LOCK_LOST', key, pgCode: '57P01' });
      expect((reason as Error).message).toContain(JSON.stringify(key));
      // B takes the key while A's fn is still running.
      expect(await second).toBe('b took over');
      expect(bRan).toBe(true);
      release.resolve();
      const error = await rejection(first);
      expect(error).toBe(reason);
      // A reconnects for its next call, and that call's signal is a fresh one.
      expect(await a.withLock(key, async (signal) => signal !== lockSignal && !signal.aborted)).toBe(true);
      expect(await holders(key)).toEqual([]);
    });

    it('every call holding a lock on the lost connection is told, and a rejection of fn is replaced by the lock error', async () => {
      const l = lock({ connectionString: DATABASE_URL });
      const keys = [freshKey(), freshKey()];
      const started = new Map<string, AbortSignal>();
      const calls = keys.map((key) =>
        l.withLock(key, async (lockSignal) => {
          started.set(key, lockSignal);
          // An fn that stops when told: it rejects with its own error.
          await new Promise((_resolve, reject) => {
            lockSignal.addEventListener('abort', () => {
              reject(new Error('stopped: the lock is gone'));
            });
          });
        }),
      );
      // Caught from the start: the calls may reject before the terminating query has answered.
      const rejections = calls.map((call) => rejection(call));
      await vi.waitFor(() => expect(started.size).toBe(2), WAIT);
      await adminPool().query('SELECT pg_terminate_backend($1)', [await holderPid(keys[0]!)]);
      const errors = await Promise.all(rejections);
      expect(errors.map((e) => (e as PostgresLockError).code)).toEqual(['POSTGRES_LOCK_LOST', 'POSTGRES_LOCK_LOST']);
      expect(errors.map((e) => (e as PostgresLockError).key)).toEqual(keys);
      for (const [i, key] of keys.entries()) expect(started.get(key)?.reason).toBe(errors[i]);
    });

    it('with a client of yours: its loss fires lockSignal, and later calls reject with POSTGRES_LOCK_FAILED', async () => {
      const c = await client();
      const l = lock({ client: c });
      const key = freshKey();
      const release = deferred();
      let lockSignal: AbortSignal | undefined;
      const held = l.withLock(key, async (signal) => {
        lockSignal = signal;
        await release.promise;
      });
      await vi.waitFor(() => expect(lockSignal).toBeDefined(), WAIT);
      await adminPool().query('SELECT pg_terminate_backend($1)', [await holderPid(key)]);
      await vi.waitFor(() => expect(lockSignal?.aborted).toBe(true), WAIT);
      release.resolve();
      expect(await rejection(held)).toMatchObject({ code: 'POSTGRES_LOCK_LOST', key });
      expect(await rejection(l.withLock(key, one))).toMatchObject({ code: 'POSTGRES_LOCK_FAILED', key });
    });

    it('a call that keeps its lock gets a signal that never fires, and resolves with what fn returns', async () => {
      const l = lock({ connectionString: DATABASE_URL });
      const key = freshKey();
      let lockSignal: AbortSignal | undefined;
      expect(
        await l.withLock(key, async (signal) => {
          lockSignal = signal;
          return 'kept';
        }),
      ).toBe('kept');
      expect(lockSignal?.aborted).toBe(false);
      // Ending the lock afterwards is no loss for a call that is over.
      await l.close();
      expect(lockSignal?.aborted).toBe(false);
    });
  });

  describe('re-entry', () => {
    it('withLock for a key inside fn of a withLock for the same key rejects at once with POSTGRES_LOCK_REENTERED; the outer call goes on', async () => {
      const l = lock({ connectionString: DATABASE_URL });
      const key = freshKey();
      const other = freshKey();
      const inner = vi.fn(async () => 'never');
      const result = await l.withLock(key, async () => {
        const error = await rejection(l.withLock(key, inner));
        // A key held further out is refused too, and so is a call from work fn started and did not await.
        const deeper = await l.withLock(other, async () => rejection(l.withLock(key, inner)));
        const detached = await new Promise((resolve) => {
          setTimeout(() => {
            resolve(rejection(l.withLock(key, inner)));
          }, 0);
        });
        return { error, deeper, detached, holders: (await holders(key)).length };
      });
      for (const error of [result.error, result.deeper, result.detached]) {
        expect(PostgresLockError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ code: 'POSTGRES_LOCK_REENTERED', key });
        expect((error as Error).message).toContain(JSON.stringify(key));
      }
      expect(inner).not.toHaveBeenCalled();
      expect(result.holders).toBe(1);
      expect(await holders(key)).toEqual([]);
    });

    it('work started inside fn may lock the key once the outer call has ended; other keys and other lock instances are not re-entry', async () => {
      const l = lock({ connectionString: DATABASE_URL });
      const otherInstance = lock({
        connectionString: DATABASE_URL,
        acquireTimeoutMs: 50,
        retryMinMs: 1,
        retryMaxMs: 10,
      });
      const key = freshKey();
      const gate = deferred();
      let later: Promise<string> | undefined;
      const nested = await l.withLock(key, async () => {
        later = gate.promise.then(() => l.withLock(key, async () => 'after the outer call'));
        const otherKey = await l.withLock(freshKey(), async () => 'another key');
        // Another instance is another connection, as another process: it waits, here until its deadline.
        const elsewhere = await rejection(otherInstance.withLock(key, async () => 'never'));
        return { otherKey, elsewhere };
      });
      expect(nested.otherKey).toBe('another key');
      expect(nested.elsewhere).toMatchObject({ code: 'POSTGRES_LOCK_TIMEOUT', key });
      gate.resolve();
      expect(await later).toBe('after the outer call');
    });
  });

  describe('the default acquire timeout', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('is 2 minutes: a call waiting on a holder that never lets go rejects with POSTGRES_LOCK_TIMEOUT then', async () => {
      const a = lock({ connectionString: DATABASE_URL });
      const b = lock({ connectionString: DATABASE_URL });
      const key = freshKey();
      const release = deferred();
      let aRunning = false;
      const first = a.withLock(key, async () => {
        aRunning = true;
        await release.promise;
      });
      await vi.waitFor(() => expect(aRunning).toBe(true), WAIT);
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      let settled = false;
      const fn = vi.fn(one);
      const waiting = b.withLock(key, fn).finally(() => {
        settled = true;
      });
      // Handled from the start: the rejection may come while the timers are advanced (a try on the
      // server in flight finishes in real time), before the next line could attach a handler.
      const failed = rejection(waiting);
      await vi.advanceTimersByTimeAsync(119_999);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const error = await failed;
      expect(error).toMatchObject({ code: 'POSTGRES_LOCK_TIMEOUT', key });
      expect((error as Error).message).toContain('120000 ms (acquireTimeoutMs)');
      expect(fn).not.toHaveBeenCalled();
      vi.useRealTimers();
      release.resolve();
      await first;
    });

    it('acquireTimeoutMs: Infinity waits without a limit (until aborted)', async () => {
      const a = lock({ connectionString: DATABASE_URL });
      const b = lock({ connectionString: DATABASE_URL, acquireTimeoutMs: Infinity });
      const key = freshKey();
      const release = deferred();
      let aRunning = false;
      const first = a.withLock(key, async () => {
        aRunning = true;
        await release.promise;
      });
      await vi.waitFor(() => expect(aRunning).toBe(true), WAIT);
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const controller = new AbortController();
      let settled = false;
      const waiting = b.withLock(key, one, { abortSignal: controller.signal }).finally(() => {
        settled = true;
      });
      const failed = rejection(waiting); // handled from the start, as above
      await vi.advanceTimersByTimeAsync(10 * 24 * 3600 * 1000);
      expect(settled).toBe(false);
      controller.abort();
      expect(AbortedError.isInstance(await failed)).toBe(true);
      vi.useRealTimers();
      release.resolve();
      await first;
    });
  });

  describe('close()', () => {
    it('rejects waiting calls with POSTGRES_LOCK_CLOSED, lets running ones finish, then ends its connection', async () => {
      const a = lock({ connectionString: DATABASE_URL });
      const b = new PostgresSessionLock({ connectionString: DATABASE_URL, retryMinMs: 1, retryMaxMs: 5 });
      const key = freshKey();
      const other = freshKey();
      const releaseA = deferred();
      const releaseB = deferred();
      let aRunning = false;
      let bRunning = false;
      const heldByA = a.withLock(key, async () => {
        aRunning = true;
        await releaseA.promise;
      });
      await vi.waitFor(() => expect(aRunning).toBe(true), WAIT);
      const running = b.withLock(other, async () => {
        bRunning = true;
        await releaseB.promise;
        return 'finished';
      });
      await vi.waitFor(() => expect(bRunning).toBe(true), WAIT);
      const [bPid] = await holders(other);
      const waiting = b.withLock(key, async () => 'never');
      const queued = b.withLock(other, async () => 'never');
      const closing = b.close();
      expect(await rejection(waiting)).toMatchObject({ code: 'POSTGRES_LOCK_CLOSED' });
      expect(await rejection(queued)).toMatchObject({ code: 'POSTGRES_LOCK_CLOSED' });
      expect(await rejection(b.withLock(freshKey(), async () => 1))).toMatchObject({ code: 'POSTGRES_LOCK_CLOSED' });
      releaseB.resolve();
      expect(await running).toBe('finished');
      await closing;
      expect(b.close()).toBe(closing);
      const { rows } = await adminPool().query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1', [
        bPid,
      ]);
      expect(rows[0]).toEqual({ n: 0 });
      releaseA.resolve();
      await heldByA;
    });

    it('leaves a client of yours open', async () => {
      const c = await client();
      const l = new PostgresSessionLock({ client: c });
      expect(await l.withLock(freshKey(), async () => 'ok')).toBe('ok');
      await l.close();
      expect((await c.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    });
  });
});

describe('error classes', () => {
  it('PostgresLockError.isInstance matches its own instances and subclasses only', () => {
    class Sub extends PostgresLockError {}
    const error = new PostgresLockError({ code: 'POSTGRES_LOCK_FAILED', message: 'lost', key: 'k', pgCode: '57P01' });
    expect(PostgresLockError.isInstance(error)).toBe(true);
    expect(PostgresLockError.isInstance(new Sub({ code: 'POSTGRES_LOCK_TIMEOUT', message: 't' }))).toBe(true);
    expect(PostgresLockError.isInstance(new AbortedError())).toBe(false);
    expect(PostgresLockError.isInstance(new SignalyardError({ code: 'POSTGRES_LOCK_FAILED', message: 'x' }))).toBe(
      false,
    );
    expect(PostgresLockError.isInstance(undefined)).toBe(false);
    expect(SignalyardError.isInstance(error)).toBe(true);
    expect(error.name).toBe('PostgresLockError');
    expect(error).toMatchObject({ key: 'k', pgCode: '57P01' });
    const bare = new PostgresLockError({ code: 'POSTGRES_LOCK_CLOSED', message: 'closed' });
    expect('key' in bare || 'pgCode' in bare).toBe(false);
  });
});

describe('types', () => {
  it('is a SessionLock whose options take exactly one of connectionString or client', () => {
    expectTypeOf<PostgresSessionLock>().toExtend<SessionLock>();
    expectTypeOf<{ connectionString: string }>().toExtend<PostgresSessionLockOptions>();
    expectTypeOf<{ client: Client; retryMaxMs: number }>().toExtend<PostgresSessionLockOptions>();
    expectTypeOf<{ client: Client; connectionString: string }>().not.toExtend<PostgresSessionLockOptions>();
    expectTypeOf<PostgresLockError['code']>().toEqualTypeOf<PostgresLockErrorCode>();
    expectTypeOf<PostgresSessionLock['withLock']>().returns.toEqualTypeOf<Promise<unknown>>();
  });
});
