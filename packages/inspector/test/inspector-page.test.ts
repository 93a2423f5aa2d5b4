// The inspector page in headless Chromium (Debian's package, driven by playwright-core).
import { mkdtempSync, mkdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { collect } from '@signalyard/test-utils';
import { createRunner, crewEngine } from 'signalyard';
import { MemoryCheckpointStore } from '@signalyard/core';
import { startInspector } from '../src/index.js';
import { describeBrowser, launchBrowser } from '@signalyard/test-utils/browser';
import { diagrams, says, testRunner } from './fixture.js';

const PAYMENTS = 'agent:cashier:main';
const shots = mkdtempSync(join(tmpdir(), 'signalyard-inspector-shots-'));
/** Set to a folder (docs/images) to keep the screenshots as documentation images. */
const keepShots = process.env.SIGNALYARD_INSPECTOR_SCREENSHOTS;

async function screenshot(page: Page, name: string): Promise<void> {
  const file = join(shots, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  if (keepShots !== undefined && keepShots !== '') {
    mkdirSync(keepShots, { recursive: true });
    copyFileSync(file, join(keepShots, `${name}.png`));
  }
}

async function openPage(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (error) => {
    throw error;
  });
  const res = await page.goto(url);
  expect(res?.status()).toBe(200);
  await page.waitForSelector('body[data-ready="true"]');
  return page;
}

describeBrowser('the inspector page in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('lists sessions, shows a route decision with tier, route and the routes it beat, highlights the FSM state, updates live, renders <script> as text and forks', async () => {
    const runner = testRunner();
    await runner.dispatch('agent:desk:main', says('my printer is on fire'));
    await runner.dispatch('agent:support:main', says('I was charged twice'));
    await runner.dispatch('agent:review:main', says('review my change'));
    // The real Runner: its timeline, its explained decisions and its describe() diagrams (no `diagrams` option).
    const inspector = await startInspector({ runner, port: 0 });
    const page = await openPage(browser, inspector.url);
    expect(page.url()).not.toContain('token='); // redirected: the token now lives in the cookie

    const rows = await page.locator('#session-list [data-session]').all();
    const keys = await Promise.all(rows.map((row) => row.getAttribute('data-session')));
    expect(keys).toEqual(['agent:desk:main', 'agent:review:main', 'agent:support:main']);

    await page.click('[data-session="agent:desk:main"]');
    // Caught up from the runner's timeline: the decision made before the inspector started
    // (not explained then: nobody asked for it).
    const before = page.locator('#timeline li[data-entry-type="route"]');
    await expect.poll(() => before.count()).toBe(1);
    expect(await before.first().textContent()).toContain('tier agent');
    expect(await before.first().locator('.route-name').textContent()).toBe('route open-ticket');
    expect(await before.first().locator('.loser').count()).toBe(0);
    expect(await page.locator('#timeline li[data-entry-type="signal"]').first().textContent()).toContain(
      'my printer is on fire',
    );
    // Now the inspector is attached, the Runner explains its decisions in the same routing pass.
    await runner.dispatch('agent:desk:main', says('still burning'));
    const route = page.locator('#timeline li[data-entry-type="route"]').first();
    await expect.poll(() => before.count()).toBe(2);
    expect(await route.textContent()).toContain('tier agent');
    expect(await route.locator('.route-name').textContent()).toBe('route open-ticket');
    expect(await route.locator('.loser').allTextContents()).toEqual(['beat: agent · fallback-chat · outranked']);
    const decided = runner.timeline('agent:desk:main').find((e) => e.event.type === 'route_decided');
    expect(decided?.event.type === 'route_decided' && decided.event.considered?.map((c) => c.outcome)).toEqual([
      'matched',
      'outranked',
    ]);
    await expect
      .poll(() => page.locator('#timeline li[data-entry-type="outcome"]').first().textContent())
      .toContain('completed');
    expect(await page.locator('#timeline li[data-entry-type="transition"]').first().textContent()).toContain(
      'open → open via open',
    );

    // The FSM diagram, drawn as SVG in the page, with the current state highlighted.
    const current = page.locator('[data-diagram="fsm"] svg .current');
    await current.first().waitFor({ timeout: 30_000 });
    expect(await current.first().textContent()).toContain('open');
    await screenshot(page, 'inspector-session');

    // A message holding markup shows as text and runs nothing.
    const hostile = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    await runner.dispatch('agent:desk:main', says(hostile));
    await expect.poll(() => page.locator('#chat').textContent(), { timeout: 10_000 }).toContain(hostile);
    expect(await page.locator('#timeline .text').allTextContents()).toContain(hostile);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('#detail script, #detail img').count()).toBe(0);

    // Fork from version 1.
    const row = page.locator('#versions tr[data-version="1"]');
    await row.locator('input').fill('agent:desk:what-if');
    await row.locator('button.fork').click();
    await expect.poll(() => page.locator('#session-header h2').textContent()).toBe('agent:desk:what-if');
    expect((await runner.session('agent:desk:what-if'))?.history).toEqual([
      { role: 'user', content: 'my printer is on fire' },
    ]);
    await expect.poll(() => page.locator('[data-session="agent:desk:what-if"]').count()).toBe(1);

    // The crew session's handoff and the pipeline's stages arrive live.
    await page.click('[data-session="agent:support:main"]');
    await page.waitForSelector('#session-header');
    // The crew's graph from describe(), and its handoff from before the inspector started.
    await page.waitForSelector('[data-diagram="crew"] svg', { timeout: 30_000 });
    await expect.poll(() => page.locator('#timeline').textContent()).toContain('handoff');
    await runner.dispatch('agent:support:main', says('and again'));
    await expect.poll(() => page.locator('#timeline li[data-entry-type="outcome"]').count()).toBe(2);
    expect(await page.locator('#timeline').textContent()).toContain('triage → billing (transfer_to_billing)');
    expect(await page.locator('#timeline').textContent()).toContain('reason: a refund request');
    // The diagram says the crew hands off by transfer tools.
    expect(await page.locator('[data-diagram="crew"] svg').textContent()).toContain('handoffs: transfer tools');
    expect(await page.locator('#chat').textContent()).toContain('Refund issued.');
    await screenshot(page, 'inspector-crew');
    await page.click('[data-session="agent:review:main"]');
    await page.waitForSelector('[data-diagram="pipeline"] svg', { timeout: 30_000 });
    await runner.dispatch('agent:review:main', says('and this one'));
    await expect.poll(() => page.locator('#timeline').textContent()).toContain('stage start');

    await page.close();
    await inspector.close();
    await runner.close();
  }, 120_000);

  it("approves a crew's pending tool call with the button (the real Runner.approve) and shows the outcome when it arrives", async () => {
    const refunds: string[] = [];
    // A crew whose refund tool needs approval by policy; the scripted clerk asks, then answers.
    const refund: Tool = {
      name: 'refund',
      parameters: { type: 'object' },
      execute: (args) => {
        const { request } = args as { request: string };
        refunds.push(request);
        return Promise.resolve(`refunded ${request}`);
      },
    };
    const model = scriptedModel({
      clerk: [
        { content: 'Let me check.', toolCalls: [{ id: 'c1', name: 'refund', arguments: { request: 'order 4711' } }] },
        'Refunded. [DONE]',
      ],
    });
    const engine = crewEngine(
      {
        entryPoint: 'clerk',
        agents: [{ id: 'clerk', tools: ['refund'] }],
        routing: { signals: { clerk: [{ signal: '[DONE]', target: '' }] } },
        approvals: { rules: [{ tool: 'refund', decision: 'ask', reason: 'refunds need a person' }] },
      },
      { model, tools: [refund] },
    );
    const runner = createRunner({ agents: [{ id: 'cashier', engine }], timeline: true });
    expect((await runner.dispatch(PAYMENTS, says('order 4711'))).status).toBe('paused');
    const inspector = await startInspector({ runner, port: 0, by: 'alice' });
    const page = await openPage(browser, inspector.url);
    await page.click(`[data-session="${PAYMENTS}"]`);
    const approval = page.locator('[data-approval="ap-1"]');
    await approval.waitFor();
    expect(await approval.textContent()).toContain('refund');
    expect(await approval.locator('pre').textContent()).toContain('"request": "order 4711"');
    const outcomes = page.locator('#timeline li[data-entry-type="outcome"]');
    await expect.poll(() => outcomes.count()).toBe(1); // the paused turn, from the runner's timeline
    expect(await outcomes.first().textContent()).toContain('paused');
    await screenshot(page, 'inspector-approval');
    await approval.locator('button.approve').click();
    await expect.poll(() => outcomes.count()).toBe(2);
    expect(await outcomes.first().textContent()).toContain('completed');
    expect(await page.locator('#timeline').textContent()).toContain('ap-1 approved');
    await expect.poll(() => page.locator('[data-approval="ap-1"]').count()).toBe(0);
    await expect.poll(() => page.locator('#chat').textContent()).toContain('refunded order 4711');
    expect(refunds).toEqual(['order 4711']);
    const [latest] = await collect(runner.history(PAYMENTS, { limit: 1 }));
    expect(latest?.cause?.approvals).toEqual([expect.objectContaining({ id: 'ap-1', approved: true, by: 'alice' })]);
    await page.close();
    await inspector.close();
    await runner.close();
  }, 60_000);

  it('answers 401 without the token and 403 for a Host it does not allow', async () => {
    const runner = testRunner();
    const inspector = await startInspector({ runner, port: 0 });
    const page = await browser.newPage();
    const origin = new URL(inspector.url).origin;
    const res = await page.goto(`${origin}/`);
    expect(res?.status()).toBe(401);
    expect(await page.textContent('body')).toContain('needs its token');
    await inspector.close();
    const strict = await startInspector({ runner, port: 0, allowedHosts: ['inspector.invalid'] });
    const refused = await page.goto(strict.url);
    expect(refused?.status()).toBe(403);
    expect(await page.textContent('body')).toContain('host_not_allowed');
    await page.close();
    await strict.close();
    await runner.close();
  }, 60_000);

  it('offline over an SQLite file: the same sessions and their versions, read-only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signalyard-inspector-offline-'));
    const path = join(dir, 'sessions.db');
    const writer = new SqliteCheckpointStore({ path });
    const runner = testRunner({ store: writer });
    await runner.dispatch('agent:desk:main', says('first'));
    await runner.dispatch('agent:desk:main', says('second <b>bold?</b>'));
    await runner.close();
    await writer.close();

    const store = new SqliteCheckpointStore({ path });
    const inspector = await startInspector({ store, port: 0, diagrams });
    const page = await openPage(browser, inspector.url);
    expect(await page.isVisible('#offline-note')).toBe(true);
    expect(await page.textContent('#mode')).toBe('offline');
    await page.click('[data-session="agent:desk:main"]');
    await page.waitForSelector('#versions tr[data-version="2"]');
    expect(await page.locator('#timeline li[data-entry-type="version"]').allTextContents()).toEqual([
      expect.stringContaining(
        'version 2user_message “second <b>bold?</b>” · tier agent · route open-ticket · completed',
      ),
      expect.stringContaining('version 1user_message “first” · tier agent · route open-ticket · completed'),
    ]);
    expect(await page.locator('button.fork').count()).toBe(0);
    await page.locator('#versions tr[data-version="1"] button.view').click();
    await expect.poll(() => page.locator('#viewing-version').textContent()).toContain('Viewing version 1');
    expect(await page.locator('#chat').textContent()).toBe('userfirst');
    await screenshot(page, 'inspector-offline');
    await page.close();
    await inspector.close();
    await store.close();
  }, 60_000);

  it('shows control characters in keys and text escaped (\\u001B, \\u000A, \\u202E), never raw', async () => {
    // A key an older release may have stored, holding ESC, a newline and RIGHT-TO-LEFT OVERRIDE.
    const store = new MemoryCheckpointStore();
    const runner = testRunner({ store });
    await runner.dispatch('agent:desk:main', says('pay \u202Etxt.exe\u202C now\u001b[2J'));
    await runner.close();
    const odd = 'agent:desk:\u001b[31mred\nfake row\u202Eevil';
    await store.save(odd, (await store.load('agent:desk:main'))!.data, 0);
    const inspector = await startInspector({ store, port: 0 });
    const page = await openPage(browser, inspector.url);
    const shown = 'agent:desk:\\u001B[31mred\\u000Afake row\\u202Eevil';
    expect(await page.locator('#session-list .key').allTextContents()).toEqual([shown, 'agent:desk:main']);
    await page.locator('#session-list li').first().click();
    await expect.poll(() => page.locator('#session-header h2').textContent()).toBe(shown);
    expect(await page.locator('#chat').textContent()).toContain('pay \\u202Etxt.exe\\u202C now\\u001B[2J');
    expect(await page.locator('#timeline').textContent()).toContain('“pay \\u202Etxt.exe\\u202C now\\u001B[2J”');
    const text = (await page.locator('body').textContent()) ?? '';
    for (const raw of ['\u001b', '\u202e', '\u202c']) expect(text).not.toContain(raw);
    await screenshot(page, 'inspector-escaped');
    await page.close();
    await inspector.close();
  }, 60_000);

  it('when too many pages are open, waits for the Retry-After of the 503 and connects; after the inspector restarts, reconnects and catches up', async () => {
    const runner = testRunner();
    await runner.dispatch('agent:desk:main', says('first'));
    const inspector = await startInspector({ runner, port: 0, maxEventStreams: 1 });
    const { origin, port } = new URL(inspector.url);
    // Another page holds the only stream.
    const other = new AbortController();
    const held = await fetch(`${origin}/api/events`, {
      headers: { cookie: `signalyard_inspector_${port}=${inspector.token}` },
      signal: other.signal,
    });
    expect(held.status).toBe(200);
    const page = await openPage(browser, inspector.url);
    const live = page.locator('#live-state');
    await expect.poll(() => live.getAttribute('data-state')).toBe('waiting');
    expect(await live.textContent()).toContain('too many pages are open, retrying in 2 s');
    other.abort();
    await expect.poll(() => live.getAttribute('data-state'), { timeout: 15_000 }).toBe('connected');
    await page.click('[data-session="agent:desk:main"]');
    const signals = page.locator('#timeline li[data-entry-type="signal"]');
    await expect.poll(() => signals.count()).toBe(1);
    await runner.dispatch('agent:desk:main', says('second'));
    await expect.poll(() => signals.count()).toBe(2); // live

    // The inspector goes away and comes back on the same address; what happened meanwhile shows.
    await inspector.close();
    await expect.poll(() => live.getAttribute('data-state')).toBe('reconnecting');
    await runner.dispatch('agent:desk:main', says('while it was away'));
    const again = await startInspector({ runner, port: Number(port), token: inspector.token });
    await expect.poll(() => live.getAttribute('data-state'), { timeout: 15_000 }).toBe('connected');
    await expect.poll(() => signals.count(), { timeout: 10_000 }).toBe(3);
    expect(await signals.first().textContent()).toContain('while it was away');
    await page.close();
    await again.close();
    await runner.close();
  }, 60_000);
});
