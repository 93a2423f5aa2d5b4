// The web chat in headless Chromium: the pages built by Vite, the AI SDK's chat client in the
// customer's, the server streaming the support desk's turns over the UI message protocol,
// sessions on SQLite, and the reviewer's page where a refund is approved or denied.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { parseCrewConfig, type Runner } from 'signalyard';
import { scriptedModel } from '@signalyard/core/testing';
import { build } from 'vite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deskRunner, paced, scriptedDeskModel, sessionKeyOf, type RefundLedger } from '../src/desk.js';
import { startWebChat, type WebChat } from '../src/server.js';
import { describeBrowser, launchBrowser } from '@signalyard/test-utils/browser';

const work = mkdtempSync(join(tmpdir(), 'signalyard-web-chat-test-'));
const shots = join(work, 'screenshots');
/** Set to a folder (docs/images) to keep the screenshots as documentation images. */
const keepShots = process.env.SIGNALYARD_WEB_CHAT_SCREENSHOTS;

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(shots, { recursive: true });
  const file = join(shots, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  if (keepShots !== undefined && keepShots !== '') {
    mkdirSync(keepShots, { recursive: true });
    copyFileSync(file, join(keepShots, `${name}.png`));
  }
}

/** What the page shows of each message, in order (what a reload must show again). */
const shown = (page: Page): Promise<string[]> => page.locator('#messages article').allTextContents();

describeBrowser('the web chat in Chromium', () => {
  let browser: Browser;
  let runner: Runner;
  let chat: WebChat;
  const ledger: RefundLedger = { refunds: [] };

  beforeAll(async () => {
    // The page as `pnpm build` of this example makes it (a fresh clone has no dist/).
    const pageDir = join(work, 'page');
    await build({
      configFile: fileURLToPath(new URL('../vite.config.ts', import.meta.url)),
      build: { outDir: pageDir },
      logLevel: 'error',
    });
    // Small chunks with a pause before each, as a provider's tokens arrive: the reply visibly grows.
    runner = deskRunner({
      dbPath: join(work, 'chat.db'),
      model: paced(scriptedDeskModel({ chunkChars: 3 }), 15),
      ledger,
    });
    chat = await startWebChat({ runner, port: 0, pageDir });
    browser = await launchBrowser();
  }, 120_000); // a Vite build and a browser start, on a loaded machine
  afterAll(async () => {
    await browser?.close();
    await chat?.close();
    await runner?.close();
    rmSync(work, { recursive: true, force: true });
  });

  async function newPage(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    page.on('pageerror', (error) => {
      throw error;
    });
    return page;
  }

  /** The reviewer's page, opened at the address the server printed. */
  async function openReview(): Promise<Page> {
    const page = await newPage();
    const res = await page.goto(chat.reviewUrl);
    expect(res?.status()).toBe(200);
    await page.waitForSelector('body[data-ready="true"]');
    expect(page.url()).not.toContain('token'); // taken out of the address once read
    return page;
  }

  async function open(chatId: string): Promise<Page> {
    const page = await newPage();
    const res = await page.goto(`${chat.url}?chat=${chatId}`);
    expect(res?.status()).toBe(200);
    await page.waitForSelector('body[data-ready="true"]');
    // Every render of the messages, as the page sees it: the length of the last assistant
    // message's text, and whether a routing marker was ever in the document.
    await page.evaluate(() => {
      const w = window as unknown as { lengths: number[]; markerSeen: boolean };
      w.lengths = [];
      w.markerSeen = false;
      new MutationObserver(() => {
        const last = [...document.querySelectorAll('article.assistant .text')].at(-1);
        w.lengths.push(last?.textContent?.length ?? 0);
        if (document.documentElement.outerHTML.includes('[ROUTE_')) w.markerSeen = true;
      }).observe(document.querySelector('#messages')!, { childList: true, subtree: true, characterData: true });
    });
    return page;
  }

  async function say(page: Page, text: string): Promise<void> {
    await page.fill('#prompt', text);
    await page.click('#send');
  }

  const idle = (page: Page): Promise<unknown> => page.waitForSelector('body[data-status="ready"]');
  const observed = (page: Page): Promise<{ lengths: number[]; markerSeen: boolean }> =>
    page.evaluate(() => {
      const w = window as unknown as { lengths: number[]; markerSeen: boolean };
      return { lengths: w.lengths, markerSeen: w.markerSeen };
    });

  async function billingQuestion(page: Page): Promise<void> {
    await say(page, 'my invoice charged me twice');
    await page.waitForSelector('article.assistant .text >> text=charged twice, $42 each time');
    await idle(page);
    const { lengths, markerSeen } = await observed(page);
    // The reply streamed in: the same message's text, seen at many growing lengths.
    const growing = lengths.filter((n, i) => i === 0 || n > (lengths[i - 1] ?? 0));
    expect(new Set(growing).size).toBeGreaterThanOrEqual(3);
    expect(markerSeen).toBe(false);
    const badge = page.locator('article.assistant .badge.handoff');
    expect(await badge.textContent()).toBe('triage → billing');
  }

  /** The customer asks for $420: the call waits for a reviewer; the customer has no button to approve it. */
  async function askRefund(page: Page): Promise<void> {
    await say(page, 'please refund $420');
    await page.waitForSelector('.tool[data-state="approval-requested"] .approval-waiting');
    expect(await page.locator('.tool[data-state="approval-requested"] .tool-input').textContent()).toContain('420');
    expect(await page.locator('.approval-waiting').textContent()).toContain('Waiting for a reviewer');
    expect(await page.locator('button.approve, button.deny').count()).toBe(0);
  }

  /** The reviewer's item for `chatId`'s pending refund. */
  async function reviewItem(review: Page, chatId: string) {
    const item = review.locator(`.review-item[data-chat-id="${chatId}"]`);
    await item.waitFor();
    expect(await item.locator('.tool-input').textContent()).toContain('"amount": 420');
    expect(await item.locator('.why').textContent()).toContain('why:');
    return item;
  }

  it("streams the reply with a handoff badge and no marker, holds a $420 refund for the reviewer, runs it on the reviewer's Approve, and shows the same conversation after a reload", async () => {
    const page = await open('approve-1');
    await billingQuestion(page);
    await screenshot(page, 'web-chat-streamed');

    await askRefund(page);
    expect(ledger.refunds).toEqual([]);
    await screenshot(page, 'web-chat-approval');
    const review = await openReview();
    const item = await reviewItem(review, 'approve-1');
    await screenshot(review, 'web-chat-review');
    await item.locator('button.approve').click();
    await item.waitFor({ state: 'detached' }); // decided: off the reviewer's list
    const result = page.locator('.tool[data-state="output-available"] .tool-result');
    await result.waitFor();
    expect(await result.textContent()).toContain('"reference": "RF-1017"');
    await page.waitForSelector('article.assistant .text >> text=$420 is on its way back to your card');
    await idle(page);
    expect(ledger.refunds).toEqual([{ invoice: 'INV-881', amount: 420, reference: 'RF-1017' }]);
    expect((await observed(page)).markerSeen).toBe(false);
    expect(await page.locator('#messages article').count()).toBe(4); // two questions, two replies
    // The refund question went straight to billing (resume_at: last_agent): still one handoff
    // badge; and the handoff, a transfer tool call, never shows as a tool (the refund is the only one).
    expect(await page.locator('.badge.handoff').count()).toBe(1);
    expect(await page.locator('.tool').count()).toBe(1);
    expect(await page.content()).not.toContain('transfer_to');
    await screenshot(page, 'web-chat');
    const before = await shown(page);

    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await shown(page)).toEqual(before);
    expect(await page.content()).not.toContain('[ROUTE_');
    expect(await page.content()).not.toContain('transfer_to');
    expect(await page.locator('.badge.handoff').count()).toBe(1);
    expect(await page.locator('.approval-waiting').count()).toBe(0);
    expect(await review.locator('.review-item').count()).toBe(0);
    await review.close();
    await page.close();
  }, 60_000);

  it("a second session: the reviewer's Deny leaves the refund undone and the reply says so", async () => {
    const page = await open('deny-1');
    await billingQuestion(page);
    await askRefund(page);
    const review = await openReview();
    const item = await reviewItem(review, 'deny-1');
    await item.locator('input.reason').fill('duplicate of RF-1017');
    await item.locator('button.deny').click();
    await page.waitForSelector('.tool[data-state="output-denied"]');
    await page.waitForSelector('article.assistant .text >> text=was not approved');
    await idle(page);
    expect(ledger.refunds).toHaveLength(1); // only the first session's refund ran
    for await (const version of runner.history(sessionKeyOf('deny-1'), { limit: 1 })) {
      expect(version.cause?.approvals).toEqual([expect.objectContaining({ approved: false, by: 'reviewer' })]);
    }
    expect(await runner.transcript(sessionKeyOf('deny-1'))).toContainEqual(
      expect.objectContaining({ type: 'tool', status: 'denied', result: 'denied: duplicate of RF-1017' }),
    );
    expect(await page.locator('.tool-result').count()).toBe(0);
    await screenshot(page, 'web-chat-denied');
    const before = await shown(page);
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await shown(page)).toEqual(before);
    await review.close();
    await page.close();
  }, 60_000);

  it('a reload mid-approval shows the same entries in the same order as live: the handoff, the held reply, a message sent during the wait after it', async () => {
    // One message that goes through triage to billing and asks a refund: the held turn has a handoff.
    const page = await open('mid-approval-1');
    await say(page, 'I was charged twice, please refund $420');
    await page.waitForSelector('.tool[data-state="approval-requested"] .approval-waiting');
    await idle(page);
    const live = await shown(page);
    expect(live).toHaveLength(2); // the question; one reply: triage's text, the handoff, billing's text and call
    expect(await page.locator('.badge.handoff').allTextContents()).toEqual(['triage → billing']);
    const order = (p: Page): Promise<string[]> =>
      p
        .locator('article.assistant > *')
        .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('class')?.split(' ')[0] ?? ''));
    const liveOrder = await order(page);
    expect(liveOrder).toEqual(['text', 'badge', 'text', 'tool']);
    await screenshot(page, 'web-chat-held');

    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await shown(page)).toEqual(live);
    expect(await order(page)).toEqual(liveOrder);
    expect(await page.locator('.badge.handoff').allTextContents()).toEqual(['triage → billing']);

    // A message during the wait is saved, nothing runs; after a reload it comes after the held reply.
    await say(page, 'any news?');
    await page.waitForSelector('.notice');
    await idle(page);
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    const roles = await page
      .locator('#messages article')
      .evaluateAll((nodes) => nodes.map((n) => `${n.getAttribute('data-role')}:${(n.textContent ?? '').slice(0, 12)}`));
    expect(roles).toEqual(['user:I was charge', expect.stringMatching(/^assistant:/), 'user:any news?']);
    expect((await shown(page)).slice(0, 2)).toEqual(live);
    await page.close();
  }, 60_000);

  it('a parallel group survives a reload: each member’s handoff and visible reply, in the same order as live', async () => {
    const crew = parseCrewConfig(`
entry_point: triage
agents:
  - id: triage
  - id: billing
  - id: tech
  - id: lead
routing:
  signals:
    triage:
      - { signal: "[ASK_BOTH]", target: both }
    lead:
      - { signal: "[RESOLVED]", target: "" }
  parallel_groups:
    both: { agents: [billing, tech], next_agent: lead }
`);
    const model = paced(
      scriptedModel(
        (req) => {
          switch (req.agentId) {
            case 'triage':
              return 'Let me ask two teams at once. [ASK_BOTH]';
            case 'billing':
              return 'Billing: only one charge went through.';
            case 'tech':
              return 'Tech: the app showed the charge twice. [RESOLVED]';
            default:
              return 'Both teams agree: you were charged once. [RESOLVED]';
          }
        },
        { streamChunkChars: 4 },
      ),
      5,
    );
    const groupRunner = deskRunner({ dbPath: join(work, 'group.db'), model, crew });
    const groupChat = await startWebChat({ runner: groupRunner, port: 0, pageDir: join(work, 'page') });
    const page = await newPage();
    await page.goto(`${groupChat.url}?chat=group-1`);
    await page.waitForSelector('body[data-ready="true"]');
    await say(page, 'was I charged twice?');
    await page.waitForSelector('article.assistant .text >> text=you were charged once');
    await idle(page);
    const live = await shown(page);
    const badges = await page.locator('.badge.handoff').allTextContents();
    expect(badges).toEqual(['triage → billing', 'triage → tech', 'triage → lead']);
    const texts = await page.locator('article.assistant .text').allTextContents();
    expect(texts).toEqual([
      'Let me ask two teams at once.',
      'Billing: only one charge went through.',
      'Tech: the app showed the charge twice.',
      'Both teams agree: you were charged once.',
    ]);
    expect(await page.content()).not.toContain('[ASK_BOTH]');
    expect(await page.content()).not.toContain('[RESOLVED]');
    await screenshot(page, 'web-chat-parallel');

    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await shown(page)).toEqual(live);
    expect(await page.locator('.badge.handoff').allTextContents()).toEqual(badges);
    expect(await page.locator('article.assistant .text').allTextContents()).toEqual(texts);
    expect(await page.content()).not.toContain('[RESOLVED]');
    await page.close();
    await groupChat.close();
    await groupRunner.close();
  }, 60_000);

  it('the reviewer page without its token says so, and shows nothing', async () => {
    const page = await newPage();
    await page.goto(new URL('/review', chat.url).href);
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.textContent('#error')).toContain('needs the reviewer token');
    expect(await page.locator('.review-item').count()).toBe(0);
    await page.close();
  }, 30_000);
});
