// The inspector over a durable inbox: the API's inbox endpoints (a session's entries and lease,
// the overview with leases and dead letters), the option's checks, and the page in Chromium.
import type { Browser } from 'playwright-core';
import { MemoryCheckpointStore, MemoryInbox, type InboxEntry, type OutcomeJson } from '@signalyard/core';
import { collect, rejectsCode } from '@signalyard/test-utils';
import { describeBrowser, launchBrowser } from '@signalyard/test-utils/browser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startInspector, type Inspector, type InspectorOptions } from '../src/index.js';
import { expectInboxPanel, http, says, testRunner } from './fixture.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies, read field by field
type Json = Record<string, any>;

const opened: Inspector[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((i) => i.close()));
});

/** Starts an inspector on a free port; `get` reads one of its JSON endpoints with the token's cookie. */
async function inspect(opts: InspectorOptions) {
  const inspector = await startInspector({ port: 0, ...opts });
  opened.push(inspector);
  const base = new URL(inspector.url).origin;
  const cookie = `signalyard_inspector_${new URL(inspector.url).port}=${inspector.token}`;
  const get = async (path: string) => {
    const res = await http(`${base}${path}`, { headers: { cookie } });
    return { status: res.status, body: JSON.parse(res.body) as Json };
  };
  return { inspector, get };
}

const poisoned = (sessionKey: string): OutcomeJson => ({
  sessionKey,
  agentId: 'support',
  status: 'failed',
  error: { code: 'INBOX_POISONED', message: 'delivered 6 times without being settled', fields: { attempts: 6 } },
});

/**
 * An inbox with two entries waiting for `agent:support:a` (leased by worker `w1`), one for
 * `agent:support:b` (not leased), and a dead letter of `agent:support:p`.
 */
async function filledInbox(): Promise<MemoryInbox> {
  const inbox = new MemoryInbox();
  const accept = (sessionKey: string, text: string) =>
    inbox.accept({ sessionKey, signal: { kind: 'user_message', payload: { text } }, id: `${sessionKey}/${text}` });
  await accept('agent:support:p', 'poison');
  const [p] = await inbox.acquire('w0', { leaseMs: 60_000, max: 1 });
  const [entry] = await collect<InboxEntry>(inbox.read(p!));
  await inbox.beginDelivery(entry!);
  await inbox.putOutcome(entry!.receiptId, poisoned('agent:support:p'), 60_000);
  await inbox.ack(entry!);
  await inbox.release(p!);
  await accept('agent:support:a', 'first');
  await accept('agent:support:a', 'second');
  await inbox.acquire('w1', { leaseMs: 60_000, max: 1 });
  await accept('agent:support:b', 'later');
  return inbox;
}

describe('the inspector over a durable inbox: the API', () => {
  it('says it has an inbox, and shows a session’s entries waiting in seq order with the lease holding it', async () => {
    const { get } = await inspect({ store: new MemoryCheckpointStore(), inbox: await filledInbox() });
    expect((await get('/api/info')).body.inbox).toBe(true);
    const a = await get('/api/inbox?key=agent%3Asupport%3Aa');
    expect(a.status).toBe(200);
    expect((a.body.entries as Json[]).map((e): unknown[] => [e.seq, e.kind, e.text, e.attempts])).toEqual([
      ['1', 'user_message', 'first', 0],
      ['2', 'user_message', 'second', 0],
    ]);
    expect(a.body.lease).toMatchObject({ key: 'agent:support:a', workerId: 'w1' });
    const b = await get('/api/inbox?key=agent%3Asupport%3Ab');
    expect(b.body.entries).toHaveLength(1);
    expect(b.body.lease).toBeNull();
    expect((await get('/api/inbox?key=agent%3Anobody%3Amain')).body).toEqual({ entries: [], lease: null });
  });

  it('the overview counts the entries waiting per session and lists the leases and the dead letters with their error', async () => {
    const { get } = await inspect({ store: new MemoryCheckpointStore(), inbox: await filledInbox() });
    const { status, body } = await get('/api/inbox/overview');
    expect(status).toBe(200);
    expect(body.pending).toEqual([
      { sessionKey: 'agent:support:a', count: 2 },
      { sessionKey: 'agent:support:b', count: 1 },
    ]);
    expect((body.leases as Json[]).map((l): unknown[] => [l.key, l.workerId])).toEqual([['agent:support:a', 'w1']]);
    expect(body.dead).toHaveLength(1);
    expect(body.dead[0]).toMatchObject({
      entry: { sessionKey: 'agent:support:p', seq: '1', attempts: 1, text: 'poison' },
      error: { code: 'INBOX_POISONED', message: 'delivered 6 times without being settled' },
    });
  });

  it('without an inbox: info says so and the inbox endpoints answer 404; a missing key is 400', async () => {
    const { get } = await inspect({ store: new MemoryCheckpointStore() });
    expect((await get('/api/info')).body.inbox).toBe(false);
    expect(await get('/api/inbox?key=agent%3Asupport%3Aa')).toMatchObject({
      status: 404,
      body: { error: { code: 'no_inbox' } },
    });
    expect((await get('/api/inbox/overview')).status).toBe(404);
    const withInbox = await inspect({ store: new MemoryCheckpointStore(), inbox: new MemoryInbox() });
    expect(await withInbox.get('/api/inbox')).toMatchObject({
      status: 400,
      body: { error: { code: 'request_invalid' } },
    });
  });

  it('a closed inbox answers 503 with its code', async () => {
    const inbox = await filledInbox();
    const { get } = await inspect({ store: new MemoryCheckpointStore(), inbox });
    await inbox.close();
    expect(await get('/api/inbox/overview')).toMatchObject({ status: 503, body: { error: { code: 'INBOX_CLOSED' } } });
  });

  it('refuses an inbox option that is not an inspectable inbox, naming what it lacks', async () => {
    const store = new MemoryCheckpointStore();
    await rejectsCode(startInspector({ store, port: 0, inbox: 'sqlite:x.db' as never }), 'INSPECTOR_OPTIONS_INVALID');
    await expect(
      startInspector({ store, port: 0, inbox: { pending: () => Promise.resolve([]) } as never }),
    ).rejects.toThrow(
      /inbox: expected an inbox with pending\(\), leases\(\) and deadLetters\(\).*no leases, deadLetters method/,
    );
  });
});

describeBrowser('the inspector over a durable inbox, in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('shows the inbox panel (waiting, leases, dead letters) and a session’s entries with its lease', async () => {
    const runner = testRunner();
    await runner.dispatch('agent:support:a', says('hello'));
    const { inspector } = await inspect({ runner, inbox: await filledInbox() });
    const page = await browser.newPage();
    page.on('pageerror', (error) => {
      throw error;
    });
    try {
      const panel = await expectInboxPanel(page, inspector.url, {
        waiting: ['agent:support:a · 2 waiting', 'agent:support:b · 1 waiting'],
        leases: [/^agent:support:a · w1 until /],
        deadLetter: 'INBOX_POISONED: delivered 6 times without being settled',
      });
      await page.click('#session-list [data-session="agent:support:a"]');
      const section = page.locator('#inbox');
      await section.waitFor();
      expect(await section.locator('h2').textContent()).toBe('Inbox: 2 waiting');
      expect(await section.locator('.lease').textContent()).toMatch(/^leased by w1 until /);
      expect(await section.locator('tr[data-seq]').allTextContents()).toEqual([
        expect.stringContaining('first'),
        expect.stringContaining('second'),
      ]);
      // A session only in the inbox (nothing saved yet) opens from the panel.
      await panel.locator('#inbox-waiting a', { hasText: 'agent:support:b' }).click();
      await expect.poll(() => page.locator('#session-header').textContent()).toContain('agent:support:b');
      expect(await page.locator('#session-header').textContent()).toContain('nothing saved yet');
      expect(await page.locator('#inbox h2').textContent()).toBe('Inbox: 1 waiting');
      expect(await page.locator('#error').isHidden()).toBe(true);
    } finally {
      await page.close();
      await runner.close();
    }
  }, 90_000);
});
