// `--workers 2` in headless Chromium: the web tier (this process, `worker: false`) serves the page
// and accepts into a SQLite inbox; two worker processes apply the turns with a model that streams
// only when the test says so. The worker applying a reply is killed with SIGKILL mid-reply, and
// the page's connection is cut mid-reply: either way the page shows one complete reply, and a
// reload shows the same conversation. No timing is asserted: every wait is on page state.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { Runner } from 'signalyard';
import { build } from 'vite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBrowser, launchBrowser } from '@signalyard/test-utils/browser';
import { scriptedDeskModel, sessionKeyOf } from '../src/desk.js';
import { deskWebTier, spawnDeskWorkers, type DeskWorkerProcess } from '../src/desk-workers.js';
import { startWebChat, type WebChat } from '../src/server.js';

const work = mkdtempSync(join(tmpdir(), 'signalyard-web-chat-workers-'));
const GATED_WORKER = fileURLToPath(new URL('./gated-worker.ts', import.meta.url));
const TRIAGE = 'Thanks for reaching out. That is a billing question, so I am passing you to our billing team.';
const BILLING =
  'I am sorry about that! I can see invoice INV-881 was charged twice, $42 each time. I can refund the duplicate charge right away: just tell me how much you want back.';

/** A text delta a worker's model asks to stream. */
interface ChunkRequest {
  readonly worker: DeskWorkerProcess;
  readonly delta: string;
}

/** The workers' gates: each text delta waits for the test's `go` until the gates open. */
class Gates {
  readonly #queue: ChunkRequest[] = [];
  readonly #waiters: ((request: ChunkRequest) => void)[] = [];
  /** Every worker that asked, in order. */
  readonly askedBy: DeskWorkerProcess[] = [];
  #open = false;
  workers: DeskWorkerProcess[] = [];

  onMessage = (worker: DeskWorkerProcess, message: unknown): void => {
    if ((message as { type?: unknown }).type !== 'chunk') return;
    const request = { worker, delta: (message as { delta: string }).delta };
    this.askedBy.push(worker);
    if ((message as { free?: unknown }).free === true) return; // streaming freely: told, not asked
    if (this.#open) {
      send(worker, { type: 'open' });
      return;
    }
    const waiter = this.#waiters.shift();
    if (waiter === undefined) this.#queue.push(request);
    else waiter(request);
  };

  /** The next delta a worker asks to stream (it waits until `go`). */
  next(): Promise<ChunkRequest> {
    const queued = this.#queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Closes every gate again (the next test drives its own reply). */
  close(): void {
    this.#open = false;
    this.#queue.length = 0;
    this.askedBy.length = 0;
    for (const worker of this.workers) send(worker, { type: 'close' });
  }

  /** Lets every live worker stream freely, the deltas waiting now included. */
  open(): void {
    this.#open = true;
    this.#queue.length = 0;
    for (const worker of this.workers) send(worker, { type: 'open' });
  }
}

function send(worker: DeskWorkerProcess, message: { type: string }): void {
  if (worker.process.connected) worker.process.send(message);
}

/** A TCP proxy in front of the server: `cut()` drops every connection, as a network change does. */
async function startProxy(
  target: () => number,
): Promise<{ port: number; cut: () => void; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target(), '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describeBrowser('the web chat with --workers 2 in Chromium', () => {
  let browser: Browser;
  let runner: Runner;
  let chat: WebChat;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  const gates = new Gates();

  beforeAll(async () => {
    const pageDir = join(work, 'page');
    await build({
      configFile: fileURLToPath(new URL('../vite.config.ts', import.meta.url)),
      build: { outDir: pageDir },
      logLevel: 'error',
    });
    const dbPath = join(work, 'chat.db');
    runner = deskWebTier({ dbPath, model: scriptedDeskModel() });
    // The web tier makes the file's tables before the workers open it.
    for await (const _ of runner.resumeStream({ sessionKey: sessionKeyOf('warm-up') })) break;
    await runner.transcript(sessionKeyOf('warm-up'));
    // The page is opened through a proxy (to cut its connection): its address is an allowed Host too.
    let serverPort = 0;
    proxy = await startProxy(() => serverPort);
    chat = await startWebChat({
      runner,
      port: 0,
      pageDir,
      resumable: true,
      allowedHosts: [`127.0.0.1:${proxy.port}`],
    });
    serverPort = Number(new URL(chat.url).port);
    gates.workers = spawnDeskWorkers({
      count: 2,
      dbPath,
      // Long enough that no lease runs out on a loaded machine but the killed worker's.
      leaseMs: 8000,
      script: GATED_WORKER,
      onMessage: gates.onMessage,
    });
    await Promise.all(gates.workers.map((w) => w.ready));
    browser = await launchBrowser();
  }, 180_000); // a Vite build, two worker processes and a browser start, on a loaded machine
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await chat?.close();
    await Promise.all(gates.workers.map((w) => w.stop()));
    await runner?.close();
    rmSync(work, { recursive: true, force: true });
  }, 60_000);

  async function open(chatId: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    // Waits on page state only, generous: a loaded 2-core machine, a lease to run out.
    page.setDefaultTimeout(90_000);
    page.on('pageerror', (error) => {
      throw error;
    });
    const res = await page.goto(`http://127.0.0.1:${proxy.port}/?chat=${chatId}`);
    expect(res?.status()).toBe(200);
    await page.waitForSelector('body[data-ready="true"]');
    return page;
  }

  /** What the page shows of each message, in order. */
  const shown = (page: Page): Promise<string[]> => page.locator('#messages article').allTextContents();
  const assistantText = (page: Page): Promise<string> =>
    page.evaluate(() =>
      [...document.querySelectorAll('article.assistant .text')].map((n) => n.textContent ?? '').join(''),
    );

  /** Lets `count` deltas through; returns the worker streaming and what the page must show now. */
  async function streamSome(count: number): Promise<{ worker: DeskWorkerProcess; text: string }> {
    let text = '';
    let request = await gates.next();
    for (let i = 0; i < count; i++) {
      text += request.delta;
      send(request.worker, { type: 'go' });
      const next = await gates.next(); // the worker waits at its next delta
      // Another worker took the turn over (a lease lost on a very loaded machine): it starts again.
      if (next.worker !== request.worker) text = '';
      request = next;
    }
    return { worker: request.worker, text };
  }

  /** The page shows one complete reply: the question, then triage's and billing's text, one badge. */
  async function expectOneCompleteReply(page: Page): Promise<void> {
    await page.waitForSelector('article.assistant .text >> text=just tell me how much you want back');
    await page.waitForSelector('body[data-status="ready"]');
    expect(await page.locator('#messages article').evaluateAll((n) => n.map((a) => a.dataset.role))).toEqual([
      'user',
      'assistant',
    ]);
    expect(await page.locator('article.assistant .text').allTextContents()).toEqual([TRIAGE, BILLING]);
    expect(await page.locator('.badge.handoff').allTextContents()).toEqual(['triage → billing']);
    const before = await shown(page);
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await shown(page)).toEqual(before);
  }

  it('the worker applying the reply is killed with SIGKILL mid-reply: the other worker’s attempt shows, once, whole', async () => {
    gates.close();
    const page = await open('kill-1');
    const resumes: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/chat/kill-1/stream')) resumes.push(request.method());
    });
    await page.fill('#prompt', 'my invoice charged me twice');
    await page.click('#send');
    const { worker: applying, text } = await streamSome(5);
    await page.waitForFunction((t) => {
      const texts = [...document.querySelectorAll('article.assistant .text')].map((n) => n.textContent ?? '');
      return texts.join('') === t;
    }, text);
    expect(TRIAGE.startsWith(await assistantText(page))).toBe(true);

    applying.process.kill('SIGKILL');
    await applying.exited;
    gates.open(); // the other worker streams freely once its lease on the session begins
    // The new attempt's `restarted` ended the page's stream without finish: it resumed (GET).
    await page.waitForSelector('article.assistant .text >> text=just tell me how much you want back');
    expect(resumes.length).toBeGreaterThanOrEqual(1);
    expect(resumes.every((m) => m === 'GET')).toBe(true);
    await expectOneCompleteReply(page);
    expect(gates.askedBy.at(-1)).not.toBe(applying); // the reply shown is the other worker's
    // Nothing in flight now: the resume route answers 204.
    const idle = await fetch(`http://127.0.0.1:${proxy.port}/api/chat/kill-1/stream`);
    expect(idle.status).toBe(204);
    await page.close();
  }, 240_000);

  it('the page’s connection is cut mid-reply: the page resumes and shows the reply once, whole', async () => {
    gates.close();
    const page = await open('cut-1');
    const resumes: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/chat/cut-1/stream')) resumes.push(request.method());
    });
    await page.fill('#prompt', 'my invoice charged me twice');
    await page.click('#send');
    const { text } = await streamSome(4);
    await page.waitForFunction((t) => {
      const texts = [...document.querySelectorAll('article.assistant .text')].map((n) => n.textContent ?? '');
      return texts.join('') === t;
    }, text);
    const before = resumes.length; // the page resumed once on load (nothing in flight then)
    proxy.cut();
    gates.open();
    await page.waitForSelector('article.assistant .text >> text=just tell me how much you want back');
    expect(resumes.length).toBeGreaterThan(before);
    expect(resumes.every((m) => m === 'GET')).toBe(true);
    await expectOneCompleteReply(page);
    await page.close();
  }, 240_000);

  it('the page is reloaded mid-reply: it resumes on load, the reply in flight replayed from its start, then live', async () => {
    gates.close();
    const page = await open('reload-1');
    await page.fill('#prompt', 'my invoice charged me twice');
    await page.click('#send');
    const { text } = await streamSome(4);
    const showsSoFar = (t: string): boolean => {
      const texts = [...document.querySelectorAll('article.assistant .text')].map((n) => n.textContent ?? '');
      return texts.join('') === t;
    };
    await page.waitForFunction(showsSoFar, text);
    await page.reload();
    await page.waitForFunction(showsSoFar, text); // replayed on load, before the worker goes on
    // The question is saved with the turn: until it settles, the page shows the reply only.
    expect(await page.locator('#messages article').count()).toBe(1);
    gates.open();
    await page.waitForSelector('article.assistant .text >> text=just tell me how much you want back');
    // Once it finished, the page loads the saved conversation: the question, then the reply.
    await page.waitForSelector('article.user');
    await page.waitForSelector('body[data-ready="true"][data-status="ready"]');
    expect(await page.locator('#messages article').evaluateAll((n) => n.map((a) => a.dataset.role))).toEqual([
      'user',
      'assistant',
    ]);
    expect(await page.locator('article.assistant .text').allTextContents()).toEqual([TRIAGE, BILLING]);
    // A reload shows the same.
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.locator('#messages article').evaluateAll((n) => n.map((a) => a.dataset.role))).toEqual([
      'user',
      'assistant',
    ]);
    expect(await page.locator('article.assistant .text').allTextContents()).toEqual([TRIAGE, BILLING]);
    await page.close();
  }, 240_000);
});
