// A replay report in the inspector: `GET /api/replay` serves the `replayReport` file (read again
// on every request), and the page shows each session's recorded and replayed runs side by side,
// the first divergence highlighted — from the inspector's file or from a file opened on disk.
import { writeFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '@signalyard/core';
import type { ReplayReport } from '@signalyard/replay';
import { describeBrowser, launchBrowser } from '@signalyard/test-utils/browser';
import { InspectorError, startInspector } from '../src/index.js';
import { http } from './fixture.js';
import { replayReportFile } from './replay-fixture.js';

let report: ReplayReport;
let file: string;
let cleanup: () => void;
beforeAll(async () => {
  ({ report, file, cleanup } = await replayReportFile());
}, 60_000);
afterAll(() => cleanup());

/** `path` on the inspector, with its token in the query (as the page's first request has it). */
const withToken = (url: string, path: string) => {
  const u = new URL(url);
  return { url: `${u.origin}${path}?token=${u.searchParams.get('token')}`, headers: {} };
};

describe('GET /api/replay', () => {
  it('serves the report file, read again on every request, and says so in /api/info', async () => {
    const inspector = await startInspector({ store: new MemoryCheckpointStore(), port: 0, replayReport: file });
    try {
      const get = async (path: string) => {
        const { url, headers } = withToken(inspector.url, path);
        return http(url, { headers });
      };
      expect(JSON.parse((await get('/api/info')).body)).toMatchObject({ replay: true });
      const first = await get('/api/replay');
      expect(first.status).toBe(200);
      expect(JSON.parse(first.body)).toEqual(JSON.parse(JSON.stringify(report)));
      writeFileSync(file, JSON.stringify({ ...report, sessions: report.sessions.slice(0, 1) }));
      expect((JSON.parse((await get('/api/replay')).body) as ReplayReport).sessions).toHaveLength(1);
      writeFileSync(file, JSON.stringify({ sessions: [{ sessionKey: 'k', status: 'lost', turns: [] }] }));
      const bad = await get('/api/replay');
      expect(bad.status).toBe(422);
      expect(bad.body).toMatch(
        /replay_report_invalid.*sessions\[0\]\.status: expected same, diverged, failed or partial/,
      );
      writeFileSync(file, '{ not json');
      expect((await get('/api/replay')).status).toBe(422);
    } finally {
      writeFileSync(file, JSON.stringify(report, null, 2));
      await inspector.close();
    }
  });

  it('answers 404 without a report, and refuses a replayReport that is not a path', async () => {
    const inspector = await startInspector({ store: new MemoryCheckpointStore(), port: 0 });
    try {
      const { url, headers } = withToken(inspector.url, '/api/replay');
      expect((await http(url, { headers })).status).toBe(404);
    } finally {
      await inspector.close();
    }
    for (const replayReport of ['', 42, {}]) {
      const started = startInspector({
        store: new MemoryCheckpointStore(),
        port: 0,
        replayReport: replayReport as string,
      });
      await expect(started).rejects.toSatisfy(
        (e: unknown) =>
          InspectorError.isInstance(e) &&
          e.code === 'INSPECTOR_OPTIONS_INVALID' &&
          e.message.includes('replayReport: expected the path of a replay report file'),
      );
    }
  });
});

describeBrowser('a replay report in the page, in Chromium', () => {
  let browser: Browser;
  let inspector: Awaited<ReturnType<typeof startInspector>>;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    inspector = await startInspector({ store: new MemoryCheckpointStore(), port: 0, replayReport: file });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (error) => {
      throw error;
    });
    const u = new URL(inspector.url);
    expect((await page.goto(`${inspector.url}#replay`))?.status()).toBe(200);
    expect(new URL(page.url()).searchParams.get('token')).toBeNull();
    expect(u.searchParams.get('token')).not.toBeNull();
    await page.waitForSelector('body[data-ready="true"]');
  }, 90_000);
  afterAll(async () => {
    await page?.close();
    await inspector?.close();
    await browser?.close();
  });

  it('lists every session with its status and first divergence, and opens the first that diverged', async () => {
    const rows = page.locator('#replay-sessions tr[data-session]');
    const statuses: (string | null)[] = [];
    for (const row of await rows.all()) statuses.push(await row.getAttribute('data-status'));
    expect(statuses).toEqual(report.sessions.map((s) => s.status));
    expect(await page.locator('#replay .muted').first().textContent()).toContain('3 sessions · 1 same · 2 diverged');
    const diverged = report.sessions.find((s) => s.status === 'diverged')!;
    await expect.poll(() => page.locator('#replay-session').getAttribute('data-session')).toBe(diverged.sessionKey);
    expect(await page.locator('#replay-session p.divergence').textContent()).toBe(
      `First divergence: ${diverged.divergence!.text}`,
    );
    expect(page.url()).toContain(`#replay=${encodeURIComponent(diverged.sessionKey)}`);
  });

  it('shows the two runs side by side, turn by turn, the diverging field highlighted in its turn', async () => {
    const bob = report.sessions.find((s) => s.sessionKey.endsWith(':bob'))!;
    await page.click(`#replay-sessions tr[data-session="${bob.sessionKey}"]`);
    const session = page.locator(`#replay-session[data-session="${bob.sessionKey}"]`);
    await session.waitFor();
    expect(await session.locator('tbody[data-turn]').count()).toBe(2);
    const turn2 = session.locator('tbody[data-turn="2"]');
    expect(await turn2.getAttribute('class')).toBe('diverged-turn');
    const highlighted = turn2.locator('tr.first-divergence');
    expect(await highlighted.getAttribute('data-field')).toBe('handoffs');
    expect(await highlighted.locator('td.recorded').textContent()).toBe('triage → billing ([TO_BILLING])');
    expect(await highlighted.locator('td.today').textContent()).toBe('triage → billing (fallback)');
    // The first turn agrees: nothing marked; the same reply on both sides.
    const turn1 = session.locator('tbody[data-turn="1"]');
    expect(await turn1.locator('tr.differs').count()).toBe(0);
    const reply = turn1.locator('tr[data-field="reply"] td');
    expect(await reply.allTextContents()).toEqual(['Hello!', 'Hello!']);
    expect(await page.locator('tr.first-divergence').count()).toBe(1);
  });

  it('keeps the chosen session over a reload, and opens a report file from disk', async () => {
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.locator('#replay-session').getAttribute('data-session')).toMatch(/:bob$/);

    const same = { ...report, sessions: report.sessions.filter((s) => s.status === 'same') };
    await page.setInputFiles('#replay-file', {
      name: 'nightly.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(same)),
    });
    await expect
      .poll(() => page.locator('#replay .muted').first().textContent())
      .toContain('nightly.json · 1 sessions');
    expect(await page.locator('#replay-session p').first().textContent()).toBe('same: both runs agree on every turn');

    await page.setInputFiles('#replay-file', {
      name: 'notes.json',
      mimeType: 'application/json',
      buffer: Buffer.from('{"cassettes": []}'),
    });
    await expect
      .poll(() => page.locator('#error').textContent())
      .toBe('notes.json: expected a replay report with a list of sessions');
  });
});
