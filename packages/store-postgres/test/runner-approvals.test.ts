// Two runners over one PostgreSQL store, without a session lock, approving the same call at the
// same moment: the engine's durable claim (ctx.commit, compare-and-set) lets one of them run the
// tool; the other reloads, finds nothing pending and is refused. The tool runs once.
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { approvalEngine, deferred } from '@signalyard/test-utils';
import { Action, createRunner, type EngineFn, type Runner } from 'signalyard';
import { afterAll, afterEach, expect, it } from 'vitest';
import { DATABASE_URL, describePostgres, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';

const tables = new Set<string>();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

/** A store on `table` (its own connection pool, as another process would have), closed after the test. */
function storeOn(table: string): PostgresCheckpointStore {
  const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 2 });
  open.push(store);
  return store;
}

function runner(r: Runner): Runner {
  open.push(r);
  return r;
}

describePostgres('two runners approving the same call at once (no session lock)', () => {
  it('the tool runs once: one approval completes, the other is refused with no_pending_approval', async () => {
    const table = uniqueTable('approve');
    tables.add(table);
    const storeA = storeOn(table);
    await storeA.migrate();
    const storeB = storeOn(table);
    const refunds: string[] = [];
    // Both turns load the pending approval before either claims it.
    let arrived = 0;
    const both = deferred();
    const engine = approvalEngine({
      tool: (args) => {
        refunds.push(args.request);
        return 'refunded';
      },
      beforeClaim: () => {
        if (++arrived === 2) both.resolve();
        return both.promise;
      },
    }) as EngineFn;
    const a = runner(createRunner({ agents: [{ id: 'support', engine }], store: storeA }));
    const b = runner(createRunner({ agents: [{ id: 'support', engine }], store: storeB }));
    const key = `agent:support:race-${process.pid}`;
    const asked = await a.dispatch(key, { kind: 'user_message', payload: '$150' });
    expect(asked.status).toBe('paused');
    const decision = [{ id: 'ap-1', approved: true }];
    const outcomes = await Promise.all([
      a.approve(key, decision, { by: 'alice' }),
      b.approve(key, decision, { by: 'bob' }),
    ]);
    expect(refunds).toEqual(['$150']);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['completed', 'rejected']);
    const refused = outcomes.find((o) => o.status === 'rejected');
    expect(refused?.action).toEqual(Action.reject('no_pending_approval'));
    const view = await b.session(key);
    expect(view?.pendingApprovals).toEqual([]);
    expect(view?.history.map((m) => m.content).at(-1)).toBe('done: refunded');
  });
});
