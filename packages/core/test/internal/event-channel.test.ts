import { describe, expect, it } from 'vitest';
import { EventChannel } from '@signalyard/core/internal';

describe('EventChannel', () => {
  it('delivers each event to every listener, in subscription order', () => {
    const channel = new EventChannel<number>();
    const seen: string[] = [];
    channel.on((e) => seen.push(`a${e}`));
    channel.on((e) => seen.push(`b${e}`));
    channel.emit(1);
    channel.emit(2);
    expect(seen).toEqual(['a1', 'b1', 'a2', 'b2']);
  });

  it('unsubscribe stops delivery and is idempotent; hasListeners follows', () => {
    const channel = new EventChannel<number>();
    expect(channel.hasListeners).toBe(false);
    const seen: number[] = [];
    const off = channel.on((e) => seen.push(e));
    expect(channel.hasListeners).toBe(true);
    channel.emit(1);
    off();
    off();
    channel.emit(2);
    expect(seen).toEqual([1]);
    expect(channel.hasListeners).toBe(false);
  });

  it('a throwing listener is reported and never breaks emit or the other listeners', () => {
    const reported: [unknown, number][] = [];
    const channel = new EventChannel<number>({ onListenerError: (error, event) => reported.push([error, event]) });
    const seen: number[] = [];
    const boom = new Error('boom');
    channel.on(() => {
      throw boom;
    });
    channel.on((e) => seen.push(e));
    expect(() => {
      channel.emit(7);
    }).not.toThrow();
    expect(seen).toEqual([7]);
    expect(reported).toEqual([[boom, 7]]);
  });

  it('an error thrown while reporting is not reported again, and a throwing reporter is contained', () => {
    const reports: unknown[] = [];
    const channel: EventChannel<string> = new EventChannel<string>({
      onListenerError: (error) => {
        reports.push(error);
        channel.emit('warning'); // the listener throws on this too: not reported recursively
        throw new Error('reporter failed');
      },
    });
    channel.on(() => {
      throw new Error('listener');
    });
    expect(() => {
      channel.emit('event');
    }).not.toThrow();
    expect(reports).toHaveLength(1);
  });

  it('a listener added during emit gets the next event, not the current one', () => {
    const channel = new EventChannel<number>();
    const late: number[] = [];
    channel.on(() => {
      if (late.length === 0) channel.on((e) => late.push(e));
    });
    channel.emit(1);
    expect(late).toEqual([]);
    channel.emit(2);
    expect(late).toEqual([2]);
  });

  it('events() buffers what is emitted and ends after end(), once the buffer is read', async () => {
    const channel = new EventChannel<number>();
    const iterable = channel.events();
    channel.emit(1);
    channel.emit(2);
    channel.end();
    const got: number[] = [];
    for await (const e of iterable) got.push(e);
    expect(got).toEqual([1, 2]);
    expect(channel.ended).toBe(true);
    expect(channel.hasListeners).toBe(false);
  });

  it('events() waits for events and ends when its abortSignal fires', async () => {
    const channel = new EventChannel<number>();
    const controller = new AbortController();
    const iterator = channel.events(controller.signal)[Symbol.asyncIterator]();
    const first = iterator.next();
    channel.emit(5);
    expect(await first).toEqual({ value: 5, done: false });
    const second = iterator.next();
    controller.abort();
    expect(await second).toEqual({ value: undefined, done: true });
    expect(channel.hasListeners).toBe(false);
  });

  it('events() on an ended channel or with an aborted signal ends at once', async () => {
    const ended = new EventChannel<number>();
    ended.end();
    expect(await ended.events()[Symbol.asyncIterator]().next()).toEqual({ value: undefined, done: true });
    const aborted = new EventChannel<number>();
    expect(await aborted.events(AbortSignal.abort())[Symbol.asyncIterator]().next()).toEqual({
      value: undefined,
      done: true,
    });
  });

  it('breaking out of events() unsubscribes and drops the buffer', async () => {
    const channel = new EventChannel<number>();
    const iterable = channel.events();
    channel.emit(1);
    channel.emit(2);
    for await (const e of iterable) {
      expect(e).toBe(1);
      break;
    }
    expect(channel.hasListeners).toBe(false);
  });

  it('after the buffer is drained, the next read waits for the next event', async () => {
    const channel = new EventChannel<object>();
    const iterator = channel.events()[Symbol.asyncIterator]();
    channel.emit({ n: 1 });
    expect(await iterator.next()).toEqual({ value: { n: 1 }, done: false });
    const pending = iterator.next();
    channel.emit({ n: 2 });
    expect(await pending).toEqual({ value: { n: 2 }, done: false });
  });
});
