// The inspector over a live Runner that has a durable inbox (SqliteInbox beside a
// SqliteCheckpointStore in one file): `startInspector({ runner })` shows the runner's own inbox —
// entries waiting per session, the lease held by the runner's worker, the dead letters — with no
// `inbox` option; an `inbox` option still wins; a runner without an inspectable inbox shows none.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { MemoryInbox, signal, type Inbox, type InboxEntry } from '@signalyard/core';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { collect, deferred } from '@signalyard/test-utils';
import { describeBrowser, launchBrowser } from '@signalyard/test-utils/browser';
import { createRunner, type EngineFn, type Runner } from 'signalyard';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startInspector, type InspectorOptions } from '../src/index.js';
import { expectInboxPanel, http } from './fixture.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies, read field by field
type Json = Record<string, any>;

const A = 'agent:main:a';
const B = 'agent:main:b';
const P = 'agent:main:p';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Starts an inspector on a free port; `get` reads one of its JSON endpoints with the token's cookie. */
async function inspect(opts: InspectorOptions) {
  const inspector = await startInspector({ port: 0, ...opts });
  cleanups.push(() => inspector.close());
  const base = new URL(inspector.url).origin;
  const cookie = `signalyard_inspector_${new URL(inspector.url).port}=${inspector.token}`;
  const get = async (path: string) => {
    const res = await http(`${base}${path}`, { headers: { cookie } });
    return { status: res.status, body: JSON.parse(res.body) as Json };
  };
  return { inspector, get };
}

const user = (text: string) => signal('user_message', { channel: 'cli', text });
const textOf = (payload: unknown): string => String((payload as { text?: unknown }).text);

/** A SqliteInbox and a SqliteCheckpointStore over one fresh temp file, closed (and removed) after the test. */
function sqliteFile(): { store: SqliteCheckpointStore; inbox: SqliteInbox } {
  const dir = mkdtempSync(join(tmpdir(), 'signalyard-inspector-inbox-'));
  const path = join(dir, 'sessions.db');
  const store = new SqliteCheckpointStore({ path });
  const inbox = new SqliteInbox({ path });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close());
  cleanups.push(() => inbox.close());
  return { store, inbox };
}

/**
 * Settles one entry of `P` as poisoned, as a worker does after too many deliveries (its outcome
 * `INBOX_POISONED`, then the acknowledgement): a dead letter.
 */
async function deadLetter(inbox: Inbox): Promise<void> {
  await inbox.accept({
    sessionKey: P,
    agentId: 'main',
    signal: { kind: 'user_message', payload: { text: 'poison' } },
    id: 'p-1',
  });
  const [lease] = await inbox.acquire('w0', { leaseMs: 60_000, max: 1 });
  const [entry] = await collect<InboxEntry>(inbox.read(lease!));
  await inbox.beginDelivery(entry!);
  await inbox.putOutcome(
    entry!.receiptId,
    {
      sessionKey: P,
      agentId: 'main',
      status: 'failed',
      error: { code: 'INBOX_POISONED', message: 'delivered 6 times without being settled', fields: { attempts: 6 } },
    },
    60_000,
  );
  await inbox.ack(entry!);
  await inbox.release(lease!);
}

/**
 * A worker runner (`w-live`, one session at a time) whose engine holds its first turn until
 * `release` resolves: with two entries of `A` and one of `B` accepted, it holds `A`'s lease with
 * both of `A`'s entries unsettled, and `B` waits unleased.
 */
async function busyRunner(inbox: Inbox, store: SqliteCheckpointStore) {
  const entered = deferred();
  const release = deferred();
  const engine: EngineFn = async (ctx) => {
    entered.resolve();
    await release.promise;
    return { messages: [{ role: 'assistant', content: `re: ${textOf(ctx.signal.payload)}` }] };
  };
  const runner = createRunner({
    agents: [{ id: 'main', engine }],
    store,
    inbox,
    worker: { id: 'w-live', maxSessions: 1, pollMs: 20 },
  });
  cleanups.push(async () => {
    release.resolve();
    await runner.close();
  });
  const first = await runner.accept(A, user('first'));
  await runner.accept(A, user('second'));
  await entered.promise;
  await runner.accept(B, user('later'));
  return { runner, release, first };
}

describe('startInspector({ runner }) over a runner with a durable SqliteInbox', () => {
  it('shows the runner’s own inbox without an inbox option: entries waiting, the lease, the dead letters', async () => {
    const { store, inbox } = sqliteFile();
    await deadLetter(inbox);
    const { runner } = await busyRunner(inbox, store);
    expect(runner.inbox).toBe(inbox);
    const { get } = await inspect({ runner });
    expect((await get('/api/info')).body).toMatchObject({ mode: 'live', inbox: true });

    const a = await get(`/api/inbox?key=${encodeURIComponent(A)}`);
    expect(a.status).toBe(200);
    expect((a.body.entries as Json[]).map((e): unknown[] => [e.seq, e.kind, e.text])).toEqual([
      ['1', 'user_message', 'first'],
      ['2', 'user_message', 'second'],
    ]);
    expect(a.body.lease).toMatchObject({ key: A, workerId: 'w-live' });
    expect(Number.isNaN(Date.parse(String(a.body.lease.expiresAt)))).toBe(false);
    const b = await get(`/api/inbox?key=${encodeURIComponent(B)}`);
    expect((b.body.entries as Json[]).map((e): unknown => e.text)).toEqual(['later']);
    expect(b.body.lease).toBeNull();

    const overview = await get('/api/inbox/overview');
    expect(overview.status).toBe(200);
    expect(overview.body.pending).toEqual([
      { sessionKey: A, count: 2 },
      { sessionKey: B, count: 1 },
    ]);
    expect((overview.body.leases as Json[]).map((l): unknown[] => [l.key, l.workerId])).toEqual([[A, 'w-live']]);
    expect(overview.body.dead).toHaveLength(1);
    expect(overview.body.dead[0]).toMatchObject({
      entry: { sessionKey: P, text: 'poison', attempts: 1 },
      error: { code: 'INBOX_POISONED', message: 'delivered 6 times without being settled' },
    });
  });

  it('a producer-only runner (worker: false) shows the entries waiting with no lease', async () => {
    const { store, inbox } = sqliteFile();
    const runner = createRunner({
      agents: [{ id: 'main', engine: () => Promise.resolve({}) }],
      store,
      inbox,
      worker: false,
    });
    cleanups.push(() => runner.close());
    await runner.accept(A, user('queued'));
    const { get } = await inspect({ runner });
    const overview = await get('/api/inbox/overview');
    expect(overview.body).toMatchObject({ pending: [{ sessionKey: A, count: 1 }], leases: [], dead: [] });
  });

  it('an inbox option wins over the runner’s own', async () => {
    const { store, inbox } = sqliteFile();
    const { runner } = await busyRunner(inbox, store);
    const { get } = await inspect({ runner, inbox: new MemoryInbox() });
    expect((await get('/api/info')).body.inbox).toBe(true);
    expect((await get('/api/inbox/overview')).body).toEqual({ pending: [], leases: [], dead: [] });
  });
});

describe('startInspector({ runner }) without an inspectable inbox', () => {
  it('a runner without an inbox: info says so and the inbox endpoints answer 404', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: () => Promise.resolve({}) }] });
    cleanups.push(() => runner.close());
    expect(runner.inbox).toBeUndefined();
    const { get } = await inspect({ runner });
    expect((await get('/api/info')).body.inbox).toBe(false);
    expect(await get('/api/inbox/overview')).toMatchObject({ status: 404, body: { error: { code: 'no_inbox' } } });
  });

  it('a runner-like object whose inbox lacks the listing methods (or is no object) starts with no inbox views', async () => {
    const base = createRunner({ agents: [{ id: 'main', engine: () => Promise.resolve({}) }] });
    cleanups.push(() => base.close());
    const like = (inbox: unknown): Runner =>
      ({
        on: base.on.bind(base),
        listSessions: base.listSessions.bind(base),
        session: base.session.bind(base),
        sessionAt: base.sessionAt.bind(base),
        history: base.history.bind(base),
        inbox,
      }) as unknown as Runner;
    for (const inbox of [{ durable: true, deadLetters: () => undefined }, 'sqlite:x.db', null, 42]) {
      const { get } = await inspect({ runner: like(inbox) });
      expect((await get('/api/info')).body.inbox, JSON.stringify(inbox)).toBe(false);
    }
  });
});

describeBrowser('the inspector over a live runner’s own inbox, in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('shows the inbox panel and the session’s entries with the worker’s lease', async () => {
    const { store, inbox } = sqliteFile();
    await deadLetter(inbox);
    const { runner } = await busyRunner(inbox, store);
    const { inspector } = await inspect({ runner });
    const page = await browser.newPage();
    page.on('pageerror', (error) => {
      throw error;
    });
    try {
      const panel = await expectInboxPanel(page, inspector.url, {
        waiting: [`${A} · 2 waiting`, `${B} · 1 waiting`],
        leases: [new RegExp(`^${A} · w-live until `)],
        deadLetter: 'INBOX_POISONED',
      });
      await panel.locator('#inbox-waiting a', { hasText: A }).click();
      await expect.poll(() => page.locator('#inbox h2').textContent()).toBe('Inbox: 2 waiting');
      expect(await page.locator('#inbox .lease').textContent()).toMatch(/^leased by w-live until /);
      expect(await page.locator('#error').isHidden()).toBe(true);
    } finally {
      await page.close();
    }
  }, 90_000);
});
