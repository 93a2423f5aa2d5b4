// kill -9 between an approved tool's side effect and the turn's save. A runner PROCESS asks for
// approval of a refund, is told to approve it, and the refund's side effect happens (a line in a
// file); the process is killed with SIGKILL before the turn is saved. The claim was committed
// before the tool ran, so after the restart — a new Runner over the same PostgreSQL table — the
// call is never run again: a duplicate approval finds nothing pending, and when the session goes
// on the model is told `outcome unknown: not retried`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignalKind, signal } from '@signalyard/core';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { Action, createRunner, crewEngine, type CrewResponse, type SessionCheckpointV1 } from 'signalyard';
import { afterAll, afterEach, expect, it } from 'vitest';
import { AGENT, crew, refundModel, refundTool } from './fixtures/approval-desk.js';
import { DATABASE_URL, describePostgres, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { IpcChild, within, type Message } from '@signalyard/test-utils/ipc-child';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** Generous: a cold start compiles the TypeScript sources of every package with tsx. */
const START_DEADLINE_MS = 90_000;
const STEP_DEADLINE_MS = 30_000;

const tables = new Set<string>();
const children: IpcChild[] = [];
const dir = mkdtempSync(join(tmpdir(), 'signalyard-kill-'));
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropTablesAndEnd(tables);
});

interface OutcomeReply extends Message {
  readonly status: string;
  readonly action?: unknown;
  readonly pendingApprovals: readonly string[];
  readonly content?: string;
  readonly error?: string;
}

describePostgres('kill -9 right after an approved tool’s side effect', () => {
  it('after the restart the tool does not run again; the model is told "outcome unknown: not retried"', async () => {
    const table = uniqueTable('kill9');
    tables.add(table);
    const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 2 });
    await store.migrate();
    const file = join(dir, 'refunds.log');
    const key = `agent:${AGENT}:kill9`;
    const sideEffects = (): string[] => readFileSync(file, 'utf8').split('\n').filter(Boolean);
    try {
      const doomed = new IpcChild(
        new URL('./fixtures/approval-child.ts', import.meta.url),
        [DATABASE_URL, table, file, 'hang-after-side-effect'],
        packageDir,
      );
      children.push(doomed);
      const stderr = (): string => doomed.stderr;
      await within(doomed.ready, START_DEADLINE_MS, 'the runner process to start', stderr);

      const asked = await within(
        doomed.request<OutcomeReply>({ type: 'say', session: 'kill9', text: 'refund $420 please' }),
        STEP_DEADLINE_MS,
        'the refund request',
        stderr,
      );
      expect(asked).toMatchObject({ status: 'paused', pendingApprovals: ['ap-1'] });

      // The process approves; the refund happens; the process dies before the turn is saved.
      void doomed
        .request({ type: 'approve', session: 'kill9', decisions: [{ id: 'ap-1', approved: true }], by: 'rita' })
        .catch(() => undefined);
      await within(doomed.next('side-effect'), STEP_DEADLINE_MS, 'the refund to happen', stderr);
      doomed.kill();
      expect(await within(doomed.exited, STEP_DEADLINE_MS, 'the killed process to exit')).toEqual({
        code: null,
        signal: 'SIGKILL',
      });
      expect(sideEffects()).toEqual([`refund 420 by ${doomed.process.pid}`]);

      // What the dead process left: the claim (committed before the tool ran), no result, nothing pending.
      const left = (await store.load(key))?.data as SessionCheckpointV1;
      expect(left.pendingApprovals ?? []).toEqual([]);
      expect(JSON.stringify(left.engine)).toContain('"status":"started"');
      expect(left.history.filter((m) => m.role === 'tool')).toEqual([]);

      // The restart: a new Runner over the same table, with the same crew and tool.
      const model = refundModel();
      const runner = createRunner({
        store,
        agents: [{ id: AGENT, engine: crewEngine(crew, { model, tools: [refundTool(file)] }) }],
      });
      try {
        // A second approval of the same call finds nothing pending: refused, nothing runs.
        const again = await runner.approve(key, [{ id: 'ap-1', approved: true }], { by: 'rita' });
        expect(again.status).toBe('rejected');
        expect(again.action).toEqual(Action.reject('no_pending_approval'));
        expect(sideEffects()).toHaveLength(1);

        // The session goes on: the claimed call is answered, not run.
        const next = await runner.dispatch(key, signal(SignalKind.UserMessage, 'is my refund done?'));
        expect(next.status).toBe('completed');
        expect((next.output as CrewResponse).content).toBe('told: outcome unknown: not retried [DONE]');
        expect(model.calls).toHaveLength(1);
        expect(model.calls[0]?.messages.at(-1)).toMatchObject({
          role: 'tool',
          content: 'outcome unknown: not retried',
          toolCallId: 'call-1',
        });
        expect(sideEffects()).toEqual([`refund 420 by ${doomed.process.pid}`]);

        const history = (await runner.session(key))?.history ?? [];
        expect(history.map((m) => `${m.role}: ${m.content}`)).toEqual([
          'user: refund $420 please',
          'user: is my refund done?',
          'assistant: Refunding.',
          'tool: outcome unknown: not retried',
          'assistant: told: outcome unknown: not retried [DONE]',
        ]);
        // And never again, whatever arrives.
        expect((await runner.approve(key, [{ id: 'ap-1', approved: true }])).status).toBe('rejected');
        expect(sideEffects()).toHaveLength(1);
      } finally {
        await runner.close();
      }
    } finally {
      await store.close();
    }
  }, 200_000);
});
