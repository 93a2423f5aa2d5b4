import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Kernel, PRIORITIES, type Priority } from '@signalyard/pipeline';
import { gated, kernelWith, lifeOf, record, ticks } from './kernel-support.js';
import { runtimeOf } from './support.js';

/** A runtime whose one stage records its input (synchronously). */
function recording(started: unknown[]) {
  return runtimeOf({ stages: [{ name: 'work', run: (ctx) => (started.push(ctx.input), {}) }] });
}

describe('priority scheduling', () => {
  it('under maxRunning 1 starts realtime, high, normal, low, idle, FIFO within one priority', async () => {
    const started: unknown[] = [];
    const kernel = kernelWith(recording(started), { maxRunning: 1 });
    const submissions: [string, Priority][] = [
      ['low-1', 'low'],
      ['normal-1', 'normal'],
      ['idle-1', 'idle'],
      ['high-1', 'high'],
      ['realtime-1', 'realtime'],
      ['normal-2', 'normal'],
      ['low-2', 'low'],
      ['high-2', 'high'],
      ['realtime-2', 'realtime'],
      ['normal-3', 'normal'],
    ];
    for (const [input, priority] of submissions) kernel.submit(input, { priority });
    await kernel.drain();
    expect(started).toEqual([
      'realtime-1',
      'realtime-2',
      'high-1',
      'high-2',
      'normal-1',
      'normal-2',
      'normal-3',
      'low-1',
      'low-2',
      'idle-1',
    ]);
  });

  it('never preempts: a realtime process waits for the running idle one, then goes before the queued ones', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime, { maxRunning: 1 });
    const first = kernel.submit('idle', { priority: 'idle' });
    await g.startedFor('idle');
    kernel.submit('low', { priority: 'low' });
    const urgent = kernel.submit('realtime', { priority: 'realtime' });
    await ticks();
    expect(kernel.status(first.pid)?.state).toBe('running');
    expect(kernel.status(urgent.pid)?.state).toBe('ready');
    expect(g.started).toEqual(['idle']);
    g.release('idle');
    await g.startedFor('realtime');
    g.release('realtime');
    g.release('low');
    await kernel.drain();
    expect(g.started).toEqual(['idle', 'realtime', 'low']);
  });

  it('runs at most maxRunning processes at once and starts the next as one ends', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime, { maxRunning: 2 });
    const handles = ['a', 'b', 'c', 'd'].map((x) => kernel.submit(x));
    await g.startedFor('b');
    await ticks();
    expect(handles.map((h) => kernel.status(h.pid)?.state)).toEqual(['running', 'running', 'ready', 'ready']);
    g.release('b');
    await g.startedFor('c');
    expect(g.running).toEqual(new Set(['a', 'c']));
    g.release('a');
    g.release('c');
    g.release('d');
    await kernel.drain();
    expect(g.started).toEqual(['a', 'b', 'c', 'd']);
  });

  it('property: with maxRunning 1, start order is the submissions stably sorted by priority', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...PRIORITIES), { maxLength: 30 }), async (priorities) => {
        const started: unknown[] = [];
        const kernel = kernelWith(recording(started), { maxRunning: 1 });
        priorities.forEach((priority, i) => kernel.submit(i, { priority }));
        await kernel.drain();
        const expected = priorities
          .map((p, i) => ({ rank: PRIORITIES.indexOf(p), i }))
          .sort((a, b) => a.rank - b.rank || a.i - b.i)
          .map((x) => x.i);
        expect(started).toEqual(expected);
      }),
      { numRuns: 50 },
    );
  });
});

describe('maxConcurrent per service', () => {
  it('regression: a service runs at most maxConcurrent processes; the others are blocked until a slot frees (the source system never enforced max_concurrent)', async () => {
    const g = gated();
    const other = gated();
    const kernel = new Kernel({ maxRunning: 4 });
    kernel.registerService('narrow', g.runtime, { maxConcurrent: 2 });
    kernel.registerService('other', other.runtime);
    const events = record(kernel);
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((x) => kernel.submit(x, { service: 'narrow' })) as [
      ReturnType<Kernel['submit']>,
      ReturnType<Kernel['submit']>,
      ReturnType<Kernel['submit']>,
      ReturnType<Kernel['submit']>,
    ];
    // blocked at once: the service's slots are spoken for
    expect([a, b, c, d].map((h) => kernel.status(h.pid)?.state)).toEqual(['ready', 'ready', 'blocked', 'blocked']);
    await g.startedFor('b');
    await ticks();
    expect([a, b, c, d].map((h) => kernel.status(h.pid)?.state)).toEqual(['running', 'running', 'blocked', 'blocked']);
    // the kernel still has room for another service
    const x = kernel.submit('x', { service: 'other' });
    await other.startedFor('x');
    expect(kernel.status(x.pid)?.state).toBe('running');
    g.release('a');
    await g.startedFor('c');
    expect(g.running).toEqual(new Set(['b', 'c']));
    expect(kernel.status(d.pid)?.state).toBe('blocked');
    g.release('b');
    g.release('c');
    g.release('d');
    other.release('x');
    await kernel.drain();
    expect(lifeOf(events, c.pid)).toEqual([
      'process_created',
      'new->ready',
      'ready->blocked',
      'blocked->ready',
      'ready->running',
      'running->terminated',
      'terminated->zombie',
    ]);
  });

  it('a more urgent process takes the place of a less urgent ready one of its full service', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime, { maxRunning: 4 }, 1);
    const low = kernel.submit('low', { priority: 'low' });
    const high = kernel.submit('high', { priority: 'high' });
    expect(kernel.status(low.pid)?.state).toBe('blocked');
    expect(kernel.status(high.pid)?.state).toBe('ready');
    const normal = kernel.submit('normal');
    expect(kernel.status(normal.pid)?.state).toBe('blocked');
    await g.startedFor('high');
    g.release('high');
    await g.startedFor('normal');
    g.release('normal');
    await g.startedFor('low');
    g.release('low');
    await kernel.drain();
    expect(g.started).toEqual(['high', 'normal', 'low']);
  });

  it('cancelling a ready process frees its service place for a blocked one', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime, { maxRunning: 1 }, 2);
    kernel.submit('a');
    await g.startedFor('a');
    const b = kernel.submit('b');
    const c = kernel.submit('c');
    expect(kernel.status(c.pid)?.state).toBe('blocked');
    kernel.cancel(b.pid);
    expect(kernel.status(c.pid)?.state).toBe('ready');
    g.release('a');
    await g.startedFor('c');
    g.release('c');
    await kernel.drain();
    expect(g.started).toEqual(['a', 'c']);
  });
});
