// The inspector answers "why", in headless Chromium: the approvals policy's allow with its rule's
// name, the runner default in words, how a run ended as text (not JSON), a Rewind button beside
// Fork, markers hidden in the offline chat, and a version a mid-turn commit saved labelled so.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MemoryCheckpointStore, type SessionVersion, type Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { collect } from '@signalyard/test-utils';
import { describeBrowser, launchBrowser } from '@signalyard/test-utils/browser';
import { createRunner, crewEngine, type Runner } from 'signalyard';
import { startInspector } from '../src/index.js';
import { says } from './fixture.js';

const KEY = 'agent:cashier:main';

/** A cashier crew: refunds up to $100 allowed by the rule `refunds-under-100`, bigger ones asked. */
function cashier(store: MemoryCheckpointStore): { runner: Runner; refunds: number[] } {
  const refunds: number[] = [];
  const refund: Tool = {
    name: 'refund',
    parameters: { type: 'object' },
    execute: (args) => {
      const { amount } = args as { amount: number };
      refunds.push(amount);
      return Promise.resolve(`refunded ${amount}`);
    },
  };
  const model = scriptedModel((req) => {
    const last = req.messages.at(-1);
    if (last?.role === 'tool') return `All set: ${last.content}. [DONE]`;
    const amount = Number(/\d+/.exec(last?.content ?? '')?.[0] ?? 0);
    return {
      content: `Refunding $${amount}.`,
      toolCalls: [{ id: `r${req.messages.length}`, name: 'refund', arguments: { amount } }],
    };
  });
  const engine = crewEngine(
    {
      entryPoint: 'clerk',
      agents: [{ id: 'clerk', tools: ['refund'] }],
      routing: { signals: { clerk: [{ signal: '[DONE]', target: '' }] } },
      approvals: {
        rules: [
          { name: 'refunds-under-100', tool: 'refund', when: [{ path: 'amount', lte: 100 }], decision: 'allow' },
          { name: 'big-refunds', tool: 'refund', decision: 'ask', reason: 'over $100' },
        ],
      },
    },
    { model, tools: [refund] },
  );
  return { runner: createRunner({ agents: [{ id: 'cashier', engine }], store, timeline: true }), refunds };
}

async function openPage(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (error) => {
    throw error;
  });
  expect((await page.goto(url))?.status()).toBe(200);
  await page.waitForSelector('body[data-ready="true"]');
  return page;
}

describeBrowser('the inspector answers why, in Chromium', () => {
  // One cashier session, three turns: a $42 refund allowed by the policy's rule, a $420 refund
  // held for a person, then approved (its claim committed mid-turn before the refund ran).
  // Each of the page's "why" answers is its own test over that session; Rewind changes the
  // session, so it runs last.
  let browser: Browser;
  let store: MemoryCheckpointStore;
  let runner: Runner;
  let inspector: Awaited<ReturnType<typeof startInspector>>;
  let page: Page;
  let versions: SessionVersion[];
  const timeline = () => page.locator('#timeline');
  const cause = (v: number) => page.locator(`#versions tr[data-version="${v}"] td:nth-child(3)`);

  beforeAll(async () => {
    browser = await launchBrowser();
    store = new MemoryCheckpointStore();
    const crew = cashier(store);
    runner = crew.runner;
    expect((await runner.dispatch(KEY, says('refund 42'))).status).toBe('completed');
    const paused = await runner.dispatch(KEY, says('refund 420'));
    expect(paused.status).toBe('paused');
    expect((await runner.approve(KEY, [{ id: paused.pendingApprovals![0]!.id, approved: true }])).status).toBe(
      'completed',
    );
    expect(crew.refunds).toEqual([42, 420]);
    versions = await collect(runner.history(KEY));

    inspector = await startInspector({ runner, port: 0 });
    page = await openPage(browser, inspector.url);
    await page.click(`[data-session="${KEY}"]`);
    await timeline().locator('li[data-entry-type="route"]').nth(2).waitFor();
  }, 90_000);
  afterAll(async () => {
    await page?.close();
    await inspector?.close();
    await runner?.close();
    await browser?.close();
  });

  it('says "no route matched: runner default → continue" where the runner default decided', async () => {
    const routes = await timeline().locator('li[data-entry-type="route"] .route-name').allTextContents();
    expect(routes).toEqual([
      'no route matched: runner default → continue',
      'no route matched: runner default → continue',
      'no route matched: runner default → continue',
    ]);
    expect(await timeline().textContent()).not.toContain('tier —');
    expect(await timeline().textContent()).not.toContain('(unnamed)');
  });

  it('shows the approvals policy’s allow and ask with the rule’s name, in the timeline, the chat and the cause', async () => {
    const decisions = await timeline().locator('li[data-entry-type="engine"] .decision').allTextContents();
    expect(decisions).toEqual([
      'refund by clerk held for a person by rule big-refunds: over $100',
      'refund by clerk allowed by rule refunds-under-100',
    ]);
    expect(await page.locator('#chat .tool .why').allTextContents()).toEqual([
      ' (allowed by rule refunds-under-100)',
      ' (held for a person by rule big-refunds)',
    ]);
    expect(await cause(1).textContent()).toContain('refund allowed by rule refunds-under-100');
  });

  it('renders how each run ended as text, never an event’s raw JSON', async () => {
    const ends = await timeline().locator('li[data-entry-type="engine"]', { hasText: 'run ended' }).allTextContents();
    expect(ends).toHaveLength(2);
    for (const end of ends) expect(end).toContain('clerk ended the run by its signal [DONE]');
    expect(await timeline().textContent()).not.toMatch(/\{\s*"type"/);
    expect(await page.locator('#chat').textContent()).not.toContain('[DONE]');
  });

  it('labels the version a mid-turn commit saved, and only that one', async () => {
    const midTurn = versions.find((v) => v.cause?.signal?.kind === 'tool_approval' && v.cause.status === undefined);
    expect(midTurn).toBeDefined();
    expect(await cause(midTurn!.version).textContent()).toContain('saved mid-turn (a commit before the turn ended)');
    for (const v of versions.filter((x) => x !== midTurn)) {
      expect(await cause(v.version).textContent()).not.toContain('mid-turn');
    }
  });

  it('hides the markers in the offline chat (the store alone, no crew to ask), with no Fork or Rewind', async () => {
    const offline = await startInspector({ store, port: 0 });
    const off = await openPage(browser, offline.url);
    try {
      await off.click(`[data-session="${KEY}"]`);
      await off.locator('#chat').waitFor();
      const text = await off.locator('#chat').textContent();
      expect(text).toContain('All set: refunded 42.');
      expect(text).toContain('All set: refunded 420.');
      expect(text).not.toContain('[DONE]');
      expect(await off.locator('#versions button.rewind, #versions button.fork').count()).toBe(0);
    } finally {
      await off.close();
      await offline.close();
    }
  });

  it('rewinds from the Rewind button beside Fork: a new version with the old version’s data', async () => {
    const final = versions[0]!;
    const row = page.locator('#versions tr[data-version="1"]');
    expect(await row.locator('button.fork').count()).toBe(1);
    expect(await page.locator(`#versions tr[data-version="${final.version}"] button.rewind`).count()).toBe(0);
    await row.locator('button.rewind').click();
    await expect.poll(() => page.locator('#versions tr').count()).toBe(versions.length + 2); // + header row
    await expect
      .poll(() => page.locator(`#versions tr[data-version="${final.version + 1}"]`).textContent())
      .toContain('rewound to version 1');
    const [rewound] = await collect(runner.history(KEY, { limit: 1 }));
    expect(rewound).toMatchObject({ version: final.version + 1, cause: { rewoundTo: 1 } });
    const v1 = await runner.sessionAt(KEY, 1);
    expect((await runner.session(KEY))?.history).toEqual(v1?.history);
  });
});
