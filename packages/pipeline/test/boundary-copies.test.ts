// Regression: a run holds deep, frozen copies of what crosses its boundary (the input, every
// output, interrupt payloads, resume answers, and what Envelope.fromJSON reads), so neither the
// caller's objects nor an envelope given to resume() ever change, whatever a stage does, and
// later changes to the caller's objects never reach an envelope.
import { describe, expect, it } from 'vitest';
import { Envelope, Kernel, type StageContext } from '@signalyard/pipeline';
import { runtimeOf, stage } from './support.js';

/** Runs `change` and returns what it threw (a stage's attempt to write into frozen data). */
function attempt(change: () => void): unknown {
  try {
    change();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('the boundary of a run', () => {
  it("a stage cannot change the caller's input through ctx.input", async () => {
    const input = { nested: { x: 1 }, list: [1, 2] };
    const attempts: unknown[] = [];
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: (ctx: StageContext) => {
            const seen = ctx.input as typeof input;
            attempts.push(attempt(() => (seen.nested.x = 2)));
            attempts.push(attempt(() => seen.list.push(3)));
            return { frozen: Object.isFrozen(seen) && Object.isFrozen(seen.nested) };
          },
        },
      ],
    });
    const env = await runtime.run(input);
    expect(input).toEqual({ nested: { x: 1 }, list: [1, 2] });
    expect(attempts.every((e) => e instanceof TypeError)).toBe(true);
    expect(env.outputs.a).toEqual({ frozen: true });
    expect(env.input).toEqual(input);
    expect(env.input).not.toBe(input);
  });

  it('changing the input after run() changes neither the run nor its envelope', async () => {
    const input = { n: 1, nested: { n: 1 } };
    const seen: unknown[] = [];
    const promise = runtimeOf({
      stages: [{ name: 'a', run: (ctx) => (seen.push(structuredClone(ctx.input)), {}) }],
    }).run(input);
    input.n = 2;
    input.nested.n = 2;
    const env = await promise;
    expect(seen).toEqual([{ n: 1, nested: { n: 1 } }]);
    expect(env.input).toEqual({ n: 1, nested: { n: 1 } });
  });

  it('a resumed stage cannot change the envelope given to resume() through ctx.outputs', async () => {
    const attempts: unknown[] = [];
    const runtime = runtimeOf({
      stages: [
        stage('a', { nested: { x: 1 }, list: [1] }, { defaultNext: 'b' }),
        {
          name: 'b',
          run: (ctx: StageContext) => {
            if (ctx.response === undefined) ctx.interrupt('clarification', { question: 'go on?' });
            const a = ctx.outputs.a as { nested: { x: number }; list: number[] };
            attempts.push(attempt(() => (a.nested.x = 99)));
            attempts.push(attempt(() => a.list.push(2)));
            return { went: true };
          },
        },
      ],
    });
    const paused = await runtime.run(null);
    const before = JSON.stringify(paused);
    const done = await runtime.resume(paused, { text: 'yes' });
    expect(JSON.stringify(paused)).toBe(before);
    expect(paused.outputs.a).toEqual({ nested: { x: 1 }, list: [1] });
    expect(done.outputs.a).toEqual({ nested: { x: 1 }, list: [1] });
    expect(attempts.every((e) => e instanceof TypeError)).toBe(true);
  });

  it("changing a stage's returned object afterwards does not change the envelope, nested values included", async () => {
    const out = { nested: { x: 1 }, list: [{ y: 1 }] };
    const env = await runtimeOf({ stages: [{ name: 'a', run: () => out }] }).run(null);
    out.nested.x = 2;
    (out.list[0] as { y: number }).y = 2;
    expect(env.outputs.a).toEqual({ nested: { x: 1 }, list: [{ y: 1 }] });
    expect(Object.isFrozen((env.outputs.a as typeof out).list[0])).toBe(true);
  });

  it('an interrupt keeps a copy of its payload, and resume a copy of its answer', async () => {
    const payload = { question: { text: 'which one?' } };
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: (ctx) => (ctx.response === undefined ? ctx.interrupt('clarification', payload) : { got: ctx.response }),
        },
      ],
    });
    const paused = await runtime.run(null);
    payload.question.text = 'changed';
    expect(paused.interrupt?.payload).toEqual({ question: { text: 'which one?' } });
    const answer = { text: 'this one', data: { pick: [1] } };
    const done = await runtime.resume(paused, answer);
    answer.data.pick.push(2);
    expect(done.resolvedInterrupts[0]!.response).toEqual({ text: 'this one', data: { pick: [1] } });
    expect(done.outputs.a).toEqual({ got: { text: 'this one', data: { pick: [1] } } });
  });

  it('Envelope.fromJSON copies deeply: later changes to the JSON never reach the envelope', async () => {
    const json = (await runtimeOf({ stages: [stage('a', { nested: { x: 1 } })] }).run({ q: { n: 1 } })).toJSON();
    const copy = JSON.parse(JSON.stringify(json)) as typeof json;
    const env = Envelope.fromJSON(copy);
    (copy.outputs.a as { nested: { x: number } }).nested.x = 2;
    (copy.input as { q: { n: number } }).q.n = 2;
    expect(env.outputs.a).toEqual({ nested: { x: 1 } });
    expect(env.input).toEqual({ q: { n: 1 } });
  });

  it('a kernel process runs the input as it was submitted', async () => {
    const kernel = new Kernel();
    kernel.registerService('s', runtimeOf({ stages: [{ name: 'a', run: (ctx) => ({ saw: ctx.input }) }] }));
    const input = { n: 1 };
    const { result } = kernel.submit(input);
    input.n = 2;
    expect((await result).outputs.a).toEqual({ saw: { n: 1 } });
  });

  it('class instances are kept as they are (only plain objects and arrays are copied)', async () => {
    const when = new Date(0);
    const env = await runtimeOf({
      stages: [{ name: 'a', run: (ctx) => ({ when: (ctx.input as { when: Date }).when }) }],
    }).run({
      when,
    });
    expect((env.outputs.a as { when: Date }).when).toBe(when);
    expect(Object.isFrozen(when)).toBe(false);
  });
});
