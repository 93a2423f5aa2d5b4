// Approvals are resumable in any process: the checkpoint is the truth. A runner asks for
// approval and closes; a second runner over the same SQLite file approves, and the tool runs once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { approvalEngine } from '@signalyard/test-utils';
import { createRunner, type EngineFn } from 'signalyard';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-approvals-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('approving from a second Runner over the same SQLite file', () => {
  it('the first runner pauses and closes; the second approves: the tool runs once and the turn completes', async () => {
    const path = join(dir, 'approvals.db');
    const refunds: string[] = [];
    const engine = approvalEngine({
      tool: (args) => {
        refunds.push(args.request);
        return `refunded ${args.request}`;
      },
    }) as EngineFn;

    const firstStore = new SqliteCheckpointStore({ path });
    const first = createRunner({ agents: [{ id: 'support', engine }], store: firstStore });
    const asked = await first.handle({ channel: 'cli', text: '$150' });
    expect(asked.status).toBe('paused');
    const [approval] = asked.pendingApprovals ?? [];
    await first.close();
    await firstStore.close();

    const secondStore = new SqliteCheckpointStore({ path });
    const second = createRunner({ agents: [{ id: 'support', engine }], store: secondStore });
    expect((await second.session('agent:support:main'))?.pendingApprovals).toEqual([approval]);
    const outcome = await second.approve('agent:support:main', [{ id: approval?.id ?? '', approved: true }], {
      by: 'alice',
    });
    expect(outcome.status).toBe('completed');
    expect(outcome.output).toBe('refunded $150');
    expect(refunds).toEqual(['$150']);
    const again = await second.approve('agent:support:main', [{ id: approval?.id ?? '', approved: true }]);
    expect(again.status).toBe('rejected');
    expect(refunds).toEqual(['$150']);
    const view = await second.session('agent:support:main');
    expect(view?.pendingApprovals).toEqual([]);
    expect(view?.history.map((m) => m.content).at(-1)).toBe('done: refunded $150');
    await second.close();
    await secondStore.close();
  });

  it('a rewind that reissues the approval under a new id: a second runner over the file maps it, the old id decides nothing', async () => {
    const path = join(dir, 'reissue.db');
    const refunds: string[] = [];
    const engine = approvalEngine({
      tool: (args) => {
        refunds.push(args.request);
        return `refunded ${args.request}`;
      },
    }) as EngineFn;
    const key = 'agent:support:main';

    const firstStore = new SqliteCheckpointStore({ path });
    const first = createRunner({ agents: [{ id: 'support', engine }], store: firstStore });
    const asked = await first.handle({ channel: 'cli', text: '$150' });
    const oldId = asked.pendingApprovals?.[0]?.id ?? '';
    await first.handle({ channel: 'cli', text: 'anyone?' });
    const rewound = await first.rewind(key, 1, { reissueApprovals: true });
    const newId = rewound.pendingApprovals[0]?.id ?? '';
    expect(newId).not.toBe(oldId);
    await first.close();
    await firstStore.close();

    const secondStore = new SqliteCheckpointStore({ path });
    const second = createRunner({ agents: [{ id: 'support', engine }], store: secondStore });
    expect((await second.session(key))?.pendingApprovals.map((p) => p.id)).toEqual([newId]);
    const old = await second.approve(key, [{ id: oldId, approved: true }]);
    expect(old.status).toBe('rejected'); // no_pending_approval: the runner's own check
    expect(refunds).toEqual([]);
    const outcome = await second.approve(key, [{ id: newId, approved: true }], { by: 'alice' });
    expect(outcome).toMatchObject({ status: 'completed', output: 'refunded $150' });
    expect(refunds).toEqual(['$150']);
    await second.close();
    await secondStore.close();
  });
});
