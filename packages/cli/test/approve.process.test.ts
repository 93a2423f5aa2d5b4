// `signalyard approve` through the committed bin, as an operator runs it from a second terminal:
// an app's runner paused a refund on a reviewer's approval (in this process, over a SQLite file
// or a PostgreSQL table); the command builds the app's runner from --config, and the refund runs
// in the command's process, once.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointStore, OutcomeJson } from '@signalyard/core';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { createRunner } from 'signalyard';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DATABASE_URL, describePostgres, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { refundDeskOptions, storeOf } from './fixtures/approve/refund-desk.config.js';
import { FIXTURES, BUILD_TIMEOUT_MS, ensureBuiltCli, lines, runBuiltCli, type CliResult } from './support.js';

// Each test spawns the built CLI a few times, each loading the runner: allow for a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

const CONFIGS = join(FIXTURES, 'approve');
const KEY = 'agent:billing:main';
const dir = mkdtempSync(join(tmpdir(), 'signalyard-cli-approve-'));
const tables: string[] = [];
beforeAll(() => {
  ensureBuiltCli();
}, BUILD_TIMEOUT_MS);
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropTablesAndEnd(tables);
});

let files = 0;
/** A fresh SQLite store URL and ledger file. */
function sqliteApp(): { store: string; ledger: string } {
  files += 1;
  return { store: `sqlite:${join(dir, `app-${files}.db`)}`, ledger: join(dir, `refunds-${files}.jsonl`) };
}

/** The app's first terminal: carol asks for a refund; the runner pauses it on approval ap-1. */
async function pauseRefund(store: CheckpointStore, ledger: string): Promise<void> {
  const runner = createRunner(refundDeskOptions({ store, ledger }));
  try {
    const outcome = await runner.handle({ channel: 'cli', text: 'Please refund order 5531, $420' });
    expect(outcome).toMatchObject({ status: 'paused', sessionKey: KEY, pendingApprovals: [{ id: 'ap-1' }] });
  } finally {
    await runner.close();
    await store.close?.();
  }
}

/** The refunds carried out so far, with the process that ran each. */
function refunds(ledger: string): { order: string; amount: number; pid: number }[] {
  if (!existsSync(ledger)) return [];
  return lines(readFileSync(ledger, 'utf8')).map(
    (l) => JSON.parse(l) as { order: string; amount: number; pid: number },
  );
}

/** `signalyard approve KEY <args…>` through the bin, with the app's store and ledger in the environment. */
const approve = (
  app: { store: string; ledger: string; table?: string },
  args: readonly string[],
  cwd = CONFIGS,
): Promise<CliResult> =>
  runBuiltCli(['approve', ...args], {
    bin: true,
    cwd,
    env: { APPROVE_STORE: app.store, APPROVE_LEDGER: app.ledger, APPROVE_TABLE: app.table, NO_COLOR: '1' },
  });

describe('signalyard approve (the bin, SQLite)', () => {
  it('a reviewer allows the refund from a second process: it runs there, once, with the config (.ts through tsx)', async () => {
    const app = sqliteApp();
    await pauseRefund(storeOf(app.store, undefined), app.ledger);
    expect(refunds(app.ledger)).toEqual([]);

    // Not a reviewer: the app's reviewers-only route refuses; nothing runs, the call stays pending.
    const refused = await approve(app, [
      KEY,
      'ap-1',
      '--allow',
      '--by',
      'dave@support',
      '--config',
      'refund-desk.config.js',
    ]);
    expect(refused.code).toBe(1);
    expect(lines(refused.stdout)).toEqual([
      'ap-1 allowed by dave@support: refund {"order":"5531","amount":420} (agent:billing:main)',
      'outcome: rejected (not a reviewer)',
    ]);
    expect(refused.stderr).toBe(
      'signalyard: error: session "agent:billing:main" did not apply the decision on "ap-1": rejected (not a reviewer)\n',
    );
    expect(refunds(app.ledger)).toEqual([]);

    const allowed = await approve(app, [
      KEY,
      'ap-1',
      '--allow',
      '--by',
      'rita@finance',
      '--config',
      'refund-desk-ts.config.ts',
    ]);
    expect(allowed).toEqual({
      code: 0,
      stdout: [
        'ap-1 allowed by rita@finance: refund {"order":"5531","amount":420} (agent:billing:main)',
        'outcome: completed',
        'reply: "Done: $420 refunded for order 5531"',
        '',
      ].join('\n'),
      stderr: '',
    });
    const [refund, ...more] = refunds(app.ledger);
    expect(more).toEqual([]);
    expect(refund).toMatchObject({ order: '5531', amount: 420 });
    expect(refund?.pid).not.toBe(process.pid); // it ran in the command's process

    // Decided: a second approval finds nothing pending, and the refund is not repeated.
    const again = await approve(app, [
      KEY,
      'ap-1',
      '--allow',
      '--by',
      'rita@finance',
      '--config',
      'refund-desk.config.js',
    ]);
    expect(again).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'signalyard: error: session "agent:billing:main" has no pending approval "ap-1" (none is pending); nothing ran\n',
    });
    expect(refunds(app.ledger)).toHaveLength(1);
  });

  it('--deny with a reason, as JSON: the model is told, nothing runs', async () => {
    const app = sqliteApp();
    await pauseRefund(storeOf(app.store, undefined), app.ledger);
    const denied = await approve(app, [
      KEY,
      'ap-1',
      '--deny',
      '--by',
      'rita@finance',
      '--reason',
      'over the limit',
      '--json',
      '--config',
      'refund-desk.config.js',
    ]);
    expect(denied.stderr).toBe('');
    expect(denied.code).toBe(0);
    const printed = JSON.parse(denied.stdout) as { outcome: OutcomeJson } & Record<string, unknown>;
    expect(printed).toMatchObject({
      sessionKey: KEY,
      approvalId: 'ap-1',
      approved: false,
      by: 'rita@finance',
      reason: 'over the limit',
      outcome: { sessionKey: KEY, agentId: 'billing', status: 'completed' },
    });
    expect(JSON.stringify(printed.outcome.output)).toContain('over the limit');
    expect(refunds(app.ledger)).toEqual([]);
  });

  it('two approvals racing from two processes: the refund runs once', async () => {
    const app = sqliteApp();
    await pauseRefund(storeOf(app.store, undefined), app.ledger);
    const args = [KEY, 'ap-1', '--allow', '--by', 'rita@finance', '--config', 'refund-desk.config.js'];
    const results = await Promise.all([approve(app, args), approve(app, args)]);
    expect(results.map((r) => r.code).sort()).toEqual([0, 1]);
    expect(refunds(app.ledger)).toHaveLength(1);
  });

  it('an unknown session or approval id: exit 1, nothing runs, the pending call stays', async () => {
    const app = sqliteApp();
    await pauseRefund(storeOf(app.store, undefined), app.ledger);
    const noSession = await approve(app, [
      'agent:billing:other',
      'ap-1',
      '--allow',
      '--config',
      'refund-desk.config.js',
    ]);
    expect(noSession).toEqual({
      code: 1,
      stdout: '',
      stderr: `signalyard: error: no session "agent:billing:other" in the store of config "refund-desk.config.js" (see 'signalyard sessions list')\n`,
    });
    const noApproval = await approve(app, [
      KEY,
      'ap-9',
      '--allow',
      '--by',
      'rita@finance',
      '--config',
      'refund-desk.config.js',
    ]);
    expect(noApproval).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'signalyard: error: session "agent:billing:main" has no pending approval "ap-9" (pending: ap-1); nothing ran\n',
    });
    expect(refunds(app.ledger)).toEqual([]);
    const allowed = await approve(app, [
      KEY,
      'ap-1',
      '--allow',
      '--by',
      'rita@finance',
      '--config',
      'refund-desk.config.js',
    ]);
    expect(allowed.code).toBe(0);
    expect(refunds(app.ledger)).toHaveLength(1);
  });

  it('bad command lines: exit 2 before anything loads', async () => {
    const app = sqliteApp();
    const config = ['--config', 'refund-desk.config.js'];
    const cases: [readonly string[], string][] = [
      [[KEY, 'ap-1', ...config], 'missing decision: pass --allow or --deny for approval "ap-1"'],
      [[KEY, 'ap-1', '--allow', '--deny', ...config], 'pass one of --allow or --deny, not both'],
      [
        [KEY, 'ap-1', '--deny', '--reason', 'x'.repeat(1001), ...config],
        '--reason of 1001 characters: expected at most 1000',
      ],
      [[KEY, 'ap-1', '--allow', '--by', 'b'.repeat(201), ...config], `expected 1 to 200 characters (who decides)`],
      [[KEY, 'ap-1', '--allow', '--by', '', ...config], '--by "": expected 1 to 200 characters (who decides)'],
      [['billing', 'ap-1', '--allow', ...config], 'session key "billing" is not a session key'],
      [[KEY, 'ap-1', '--allow'], "required option '--config <module>' not specified"],
      [[KEY, '--allow', ...config], "missing required argument 'approvalId'"],
    ];
    for (const [args, message] of cases) {
      const result = await approve(app, args);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(result.stderr).toContain(message);
      expect(lines(result.stderr)).toHaveLength(1);
    }
    expect(existsSync(app.store.slice('sqlite:'.length))).toBe(false); // no config loaded, no store opened
  });

  it('configs that cannot be used: one clear line and exit 2 (createRunner problems: exit 1)', async () => {
    const app = sqliteApp();
    const outside = mkdtempSync(join(tmpdir(), 'signalyard-cli-no-tsx-'));
    writeFileSync(
      join(outside, 'runner.config.ts'),
      'const options: object = { agents: [] };\nexport default options;\n',
    );
    const at = (config: string) => approve(app, [KEY, 'ap-1', '--allow', '--config', config]);
    const cases: [string, string][] = [
      ['missing.config.js', 'cannot load config "missing.config.js": no such file (looked at '],
      ['.', 'cannot load config ".": it is not a file'],
      ['no-default.config.js', 'config "no-default.config.js" has no default export'],
      ['throws.config.js', 'loading config "throws.config.js" failed: DATABASE_PASSWORD is not set'],
      [
        'function-throws.config.js',
        'the default export function of config "function-throws.config.js" failed: vault unreachable',
      ],
      ['not-options.config.js', 'config "not-options.config.js": the default export is 42, expected RunnerOptions'],
      ['no-store.config.js', 'config "no-store.config.js" gives no store: signalyard approve needs the store'],
      ['../crew.YML', 'cannot load config "../crew.YML": Node.js does not load ".YML" files as modules'],
    ];
    try {
      for (const [config, message] of cases) {
        const result = await at(config);
        expect({ config, code: result.code, stdout: result.stdout }).toEqual({ config, code: 2, stdout: '' });
        expect(result.stderr).toContain(message);
        expect(lines(result.stderr)).toHaveLength(1);
      }
      // A .ts config in a project without tsx (neither beside the module nor from the current directory).
      const noTsx = await approve(app, [KEY, 'ap-1', '--allow', '--config', 'runner.config.ts'], outside);
      expect({ code: noTsx.code, stdout: noTsx.stdout }).toEqual({ code: 2, stdout: '' });
      expect(noTsx.stderr).toBe(
        'signalyard: error: cannot load config "runner.config.ts": a TypeScript module needs the tsx package, which is not installed in this project; install it (npm i -D tsx) or compile the config to .js and pass that\n',
      );
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
    const refused = await at('bad-options.config.js');
    expect(refused.code).toBe(1);
    expect(lines(refused.stderr)).toEqual([
      'bad-options.config.js: agents: expected a non-empty list of agent definitions, got []',
      'bad-options.config.js: store: expected a CheckpointStore { load, save, delete, list }, got {}',
    ]);
  });
});

describePostgres('signalyard approve (the bin, PostgreSQL)', () => {
  it('a reviewer allows the refund from a second process: once, and a second approval finds nothing pending', async () => {
    const table = uniqueTable('approve');
    tables.push(table);
    const app = { store: DATABASE_URL, table, ledger: join(dir, 'refunds-pg.jsonl') };
    const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 2 });
    await store.migrate();
    await pauseRefund(store, app.ledger);

    const args = [KEY, 'ap-1', '--allow', '--by', 'rita@finance', '--config', 'refund-desk.config.js'];
    const allowed = await approve(app, args);
    expect(allowed.stderr).toBe('');
    expect(lines(allowed.stdout)).toEqual([
      'ap-1 allowed by rita@finance: refund {"order":"5531","amount":420} (agent:billing:main)',
      'outcome: completed',
      'reply: "Done: $420 refunded for order 5531"',
    ]);
    expect(allowed.code).toBe(0);
    const again = await approve(app, args);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('has no pending approval "ap-1" (none is pending); nothing ran');
    expect(refunds(app.ledger)).toHaveLength(1);
    expect(refunds(app.ledger)[0]?.pid).not.toBe(process.pid);
  });
});
