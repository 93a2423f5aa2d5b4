import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { StageConfig, StageOutput } from '@signalyard/pipeline';
import { runtimeOf } from './support.js';

type Behaviour = 'ok' | 'throw' | 'error_field' | 'reject' | 'invalid';

interface Graph {
  /** Stage `i` (in topological order) is named `s<i>`; `order` is the list order. */
  readonly order: readonly number[];
  readonly requires: readonly (readonly number[])[];
  readonly after: readonly (readonly number[])[];
  readonly joinAny: readonly boolean[];
  readonly behaviour: readonly Behaviour[];
  /** -1: a synchronous stage; k >= 0: resolves after k extra microtask hops. */
  readonly delay: readonly number[];
}

/** Random acyclic graphs: edges only go from a topologically earlier stage to a later one; the list order is shuffled. */
const graphs: fc.Arbitrary<Graph> = fc.integer({ min: 1, max: 8 }).chain((n) => {
  const indexes = Array.from({ length: n }, (_, i) => i);
  const edges = fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: 3 * n }).map((pairs) => {
    const out: number[][] = indexes.map(() => []);
    for (const [a, b] of pairs) if (a < b && !(out[b] as number[]).includes(a)) (out[b] as number[]).push(a);
    return out;
  });
  const each = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T[]> => fc.array(arb, { minLength: n, maxLength: n });
  return fc.record({
    order: fc.shuffledSubarray(indexes, { minLength: n, maxLength: n }),
    requires: edges,
    after: edges,
    joinAny: each(fc.boolean()),
    behaviour: each(fc.constantFrom<Behaviour>('ok', 'ok', 'ok', 'throw', 'error_field', 'reject', 'invalid')),
    delay: each(fc.integer({ min: -1, max: 3 })),
  });
});

/** What should happen to each stage: succeed, fail, or be skipped. */
function expected(g: Graph): ('ok' | 'failed' | 'skipped')[] {
  const out: ('ok' | 'failed' | 'skipped')[] = [];
  for (let i = 0; i < g.order.length; i++) {
    const reqs = g.requires[i] as readonly number[];
    const oks = reqs.filter((r) => out[r] === 'ok').length;
    const runs = reqs.length === 0 || (g.joinAny[i] === true ? oks > 0 : oks === reqs.length);
    out.push(!runs ? 'skipped' : g.behaviour[i] === 'ok' ? 'ok' : 'failed');
  }
  return out;
}

async function hops(k: number): Promise<void> {
  for (let j = 0; j < k; j++) await Promise.resolve();
}

describe('DAG mode: properties over random acyclic requires graphs with failing stages', () => {
  it('every stage runs at most once, never before its requirements (or after stages), and the run always ends as predicted', async () => {
    await fc.assert(
      fc.asyncProperty(graphs, async (g) => {
        const n = g.order.length;
        const runs = new Array<number>(n).fill(0);
        const ended: ('ok' | 'failed' | undefined)[] = new Array<'ok' | 'failed' | undefined>(n).fill(undefined);
        const violations: string[] = [];
        const stageOf = (i: number): StageConfig => {
          const behaviour = g.behaviour[i] as Behaviour;
          const finish = (): StageOutput => {
            ended[i] = behaviour === 'ok' ? 'ok' : 'failed';
            if (behaviour === 'throw') throw new Error(`s${i} threw`);
            if (behaviour === 'reject') throw new Error(`s${i} rejected`);
            if (behaviour === 'invalid') return 'nope' as unknown as StageOutput;
            return behaviour === 'error_field' ? { error: `s${i} reported` } : { i };
          };
          return {
            name: `s${i}`,
            outputKey: `out${i}`,
            requires: (g.requires[i] as readonly number[]).map((r) => `s${r}`),
            after: (g.after[i] as readonly number[]).map((r) => `s${r}`),
            joinStrategy: g.joinAny[i] === true ? 'any' : 'all',
            run: () => {
              runs[i] = (runs[i] as number) + 1;
              const reqs = g.requires[i] as readonly number[];
              const oks = reqs.filter((r) => ended[r] === 'ok').length;
              if (reqs.length > 0 && (g.joinAny[i] === true ? oks === 0 : oks < reqs.length))
                violations.push(`s${i} started before its requirements`);
              for (const a of g.after[i] as readonly number[]) {
                if ((runs[a] as number) > 0 && ended[a] === undefined)
                  violations.push(`s${i} started while its after stage s${a} ran`);
              }
              const delay = g.delay[i] as number;
              if (delay < 0) return finish();
              return hops(delay).then(finish);
            },
          };
        };
        const runtime = runtimeOf({ maxAgentHops: 100, stages: g.order.map(stageOf) });
        const env = await runtime.run(null, { mode: 'parallel' });

        expect(violations).toEqual([]);
        expect(runs.every((r) => r <= 1)).toBe(true);
        const want = expected(g);
        const names = (kind: string): string[] => want.flatMap((w, i) => (w === kind ? [`s${i}`] : [])).sort();
        expect([...env.completedStages].sort()).toEqual(names('ok'));
        expect([...env.skippedStages].sort()).toEqual(names('skipped'));
        expect([...new Set(env.errors.map((e) => e.stage))].sort()).toEqual(names('failed'));
        expect(env.agentHops).toBe(runs.reduce((a, b) => a + b, 0));
        expect(env.terminated).toBe(true);
        expect(env.terminalReason).toBe(want.includes('failed') ? 'stage_failed' : 'completed');
        for (let i = 0; i < n; i++) if (want[i] === 'ok') expect(env.outputs[`out${i}`]).toEqual({ i });
      }),
      { numRuns: 300 },
    );
  });
});
