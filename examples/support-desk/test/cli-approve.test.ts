// Approving carol's $420 refund from a second terminal: the desk runs (here, in the test's
// process) until the refund waits for a reviewer, over a SQLite file; then `signalyard approve
// --config src/runner.config.ts`, a separate process, builds the desk's runner over the same file
// and approves. The refund runs in that process, once.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createDesk, deskModel, type Refund } from '../src/desk.js';
import { connectOrders } from '../src/orders.js';

vi.setConfig({ testTimeout: 120_000 });

const EXAMPLE = fileURLToPath(new URL('..', import.meta.url));
const CLI = dirname(createRequire(import.meta.url).resolve('@signalyard/cli/package.json'));
const BIN = join(CLI, 'bin', 'signalyard.js');
const dir = mkdtempSync(join(tmpdir(), 'support-desk-approve-'));
const db = join(dir, 'desk.db');
const refundsFile = join(dir, 'refunds.jsonl');

beforeAll(() => {
  // The bin runs the built command (a fresh clone's `pnpm test` has not built it yet).
  if (!existsSync(join(CLI, 'dist', 'cli.js'))) {
    execFileSync('pnpm', ['--filter', '@signalyard/cli...', 'run', 'build'], { cwd: EXAMPLE, stdio: 'pipe' });
  }
}, 600_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const KEY = 'agent:desk:telegram:dm:1003';

/** `signalyard approve …` from the example's folder, as an operator types it. */
function signalyard(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: EXAMPLE,
      env: { ...process.env, SUPPORT_DESK_STORE: `sqlite:${db}`, SUPPORT_DESK_REFUNDS: refundsFile, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

const refunds = (): unknown[] =>
  existsSync(refundsFile)
    ? readFileSync(refundsFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown)
    : [];

it("a reviewer approves carol's refund with `signalyard approve` from a second terminal: it runs once, in that process", async () => {
  // The first terminal: the desk, over a SQLite file, until the refund waits for a reviewer.
  const store = new SqliteCheckpointStore({ path: db });
  const ledger: Refund[] = [];
  const orders = await connectOrders();
  const desk = createDesk(store, deskModel(), () => undefined, orders, ledger);
  const carol = { channel: 'telegram', peer: { kind: 'dm' as const, id: '1003' } };
  const paused = await desk.handle({ ...carol, text: 'Please refund order 5531, $420: it arrived broken' });
  expect(paused).toMatchObject({
    status: 'paused',
    sessionKey: KEY,
    pendingApprovals: [{ id: 'ap-1', toolName: 'refund' }],
  });

  // The second terminal: someone from support is refused by the desk's reviewers-only route.
  const config = ['--config', 'src/runner.config.ts'];
  const dave = await signalyard(['approve', KEY, 'ap-1', '--allow', '--by', 'dave@support', ...config]);
  expect(dave.code).toBe(1);
  expect(dave.stdout).toContain('outcome: rejected (not a reviewer)');
  expect(refunds()).toEqual([]);

  // The finance reviewer: the crew run resumes in the command's process, the refund runs there.
  const rita = await signalyard(['approve', KEY, 'ap-1', '--allow', '--by', 'rita@finance', ...config]);
  expect(rita).toEqual({
    code: 0,
    stdout: [
      'ap-1 allowed by rita@finance: refund {"order":"5531","amount":420} (agent:desk:telegram:dm:1003)',
      'outcome: completed',
      'reply: "$420 refunded for order 5531 (RF-2001): it is on its way to your card."',
      '',
    ].join('\n'),
    stderr: '',
  });
  expect(refunds()).toEqual([{ order: '5531', amount: 420, reference: 'RF-2001', pid: expect.any(Number) as number }]);
  expect(refunds()[0]).not.toMatchObject({ pid: process.pid });
  expect(ledger).toEqual([]); // not in the first terminal's process

  // Approving again decides nothing; the first terminal's runner sees the refund done.
  const again = await signalyard(['approve', KEY, 'ap-1', '--allow', '--by', 'rita@finance', ...config]);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('has no pending approval "ap-1" (none is pending); nothing ran');
  expect(refunds()).toHaveLength(1);
  expect((await desk.session(KEY))?.pendingApprovals).toEqual([]);
  const next = await desk.handle({ ...carol, text: 'Thanks! Can you email me the receipt?' });
  expect(next.status).toBe('completed');
  expect(ledger).toEqual([]);
  await desk.close();
  await orders.close();
  await store.close();
});
