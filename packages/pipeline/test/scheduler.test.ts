// The kernel's scheduling decisions are pure functions of the queues they are shown: tested here
// without a kernel.
import { describe, expect, it } from 'vitest';
import { ProcessQueue } from '../src/kernel/process-queue.js';
import { admit, nextDispatch, nextUnblocked, type KernelSlots, type ServiceSlots } from '../src/kernel/scheduler.js';

interface P {
  readonly name: string;
  readonly order: { readonly rank: number; readonly seq: number };
}

let seq = 0;
const p = (name: string, rank = 2): P => ({ name, order: { rank, seq: seq++ } });

function service(opts: { maxConcurrent?: number; running?: number; ready?: P[]; blocked?: P[]; healthy?: boolean }) {
  const blocked = new ProcessQueue<P>();
  for (const b of opts.blocked ?? []) blocked.push(b);
  const slots: ServiceSlots<P> = {
    maxConcurrent: opts.maxConcurrent ?? Infinity,
    running: opts.running ?? 0,
    healthy: opts.healthy ?? true,
    ready: new Set(opts.ready ?? []),
    blocked,
  };
  return slots;
}

function kernel(opts: { maxRunning?: number; running?: number; ready?: P[]; service?: ServiceSlots<P> }) {
  const queue = new ProcessQueue<P>();
  for (const r of opts.ready ?? []) queue.push(r);
  const svc = opts.service ?? service({});
  const slots: KernelSlots<P> = {
    maxRunning: opts.maxRunning ?? 4,
    running: opts.running ?? 0,
    peekReady: () => queue.peek(),
    serviceOf: () => svc,
  };
  return slots;
}

describe('ProcessQueue', () => {
  it('orders by priority rank, FIFO within a rank, and removes from anywhere', () => {
    const q = new ProcessQueue<P>();
    const [low1, high, low2, normal, low3] = [p('low1', 3), p('high', 1), p('low2', 3), p('normal', 2), p('low3', 3)];
    for (const x of [low1, high, low2, normal, low3]) q.push(x);
    expect(q.size).toBe(5);
    expect(q.remove(normal)).toBe(true);
    expect(q.remove(normal)).toBe(false);
    expect(q.peek()).toBe(high);
    const out: string[] = [];
    for (let x = q.pop(); x !== undefined; x = q.pop()) out.push(x.name);
    expect(out).toEqual(['high', 'low1', 'low2', 'low3']);
    expect(q.pop()).toBeUndefined();
  });

  it('keeps its order through many random pushes and removals', () => {
    const q = new ProcessQueue<P>();
    const live = new Set<P>();
    for (let i = 0; i < 500; i++) {
      const x = p(`p${i}`, (i * 7) % 5);
      q.push(x);
      live.add(x);
      if (i % 3 === 0) {
        const victim = [...live][(i * 13) % live.size] as P;
        q.remove(victim);
        live.delete(victim);
      }
    }
    const expected = [...live].sort((a, b) => a.order.rank - b.order.rank || a.order.seq - b.order.seq);
    const out: P[] = [];
    for (let x = q.pop(); x !== undefined; x = q.pop()) out.push(x);
    expect(out).toEqual(expected);
  });
});

describe('scheduler: admit', () => {
  it('a process whose service has a free slot is ready', () => {
    expect(admit(p('a'), service({ maxConcurrent: 2, running: 1 }))).toEqual({ to: 'ready', displaced: undefined });
  });

  it('a process whose service is full is blocked, unless it is more urgent than a ready one, which it displaces', () => {
    const first = p('first normal', 2);
    const second = p('second normal', 2);
    const full = service({ maxConcurrent: 2, ready: [second, first] });
    expect(admit(p('third normal', 2), full)).toEqual({ to: 'blocked' });
    // the least urgent ready process is the later of the two
    expect(admit(p('high', 1), full)).toEqual({ to: 'ready', displaced: second });
    expect(admit(p('idle', 4), service({ maxConcurrent: 1, ready: [p('low', 3)] }))).toEqual({ to: 'blocked' });
  });

  it('running processes take slots: with every slot running there is nobody to displace', () => {
    expect(admit(p('realtime', 0), service({ maxConcurrent: 1, running: 1 }))).toEqual({ to: 'blocked' });
  });

  it('changes nothing', () => {
    const ready = [p('a', 3)];
    const s = service({ maxConcurrent: 1, ready });
    admit(p('b', 0), s);
    expect([...s.ready]).toEqual(ready);
  });
});

describe('scheduler: nextUnblocked', () => {
  it('is the most urgent blocked process while a slot is free', () => {
    const [low, high] = [p('low', 3), p('high', 1)];
    expect(nextUnblocked(service({ maxConcurrent: 2, running: 1, blocked: [low, high] }))).toBe(high);
  });

  it('is nothing while the service is full, or nothing is blocked', () => {
    expect(nextUnblocked(service({ maxConcurrent: 1, running: 1, blocked: [p('x')] }))).toBeUndefined();
    expect(nextUnblocked(service({ maxConcurrent: 1, ready: [p('r')], blocked: [p('x')] }))).toBeUndefined();
    expect(nextUnblocked(service({ maxConcurrent: 3 }))).toBeUndefined();
  });
});

describe('scheduler: nextDispatch', () => {
  it('starts the most urgent ready process while fewer than maxRunning run', () => {
    const [normal, realtime] = [p('normal', 2), p('realtime', 0)];
    expect(nextDispatch(kernel({ ready: [normal, realtime] }))).toEqual({ kind: 'start', process: realtime });
  });

  it('does nothing when maxRunning processes run (no preemption) or none is ready', () => {
    expect(nextDispatch(kernel({ maxRunning: 2, running: 2, ready: [p('realtime', 0)] }))).toBeUndefined();
    expect(nextDispatch(kernel({}))).toBeUndefined();
  });

  it('refuses a process whose service became unhealthy while it was queued', () => {
    const x = p('x');
    expect(nextDispatch(kernel({ ready: [x], service: service({ healthy: false }) }))).toEqual({
      kind: 'refuse',
      process: x,
    });
  });
});
