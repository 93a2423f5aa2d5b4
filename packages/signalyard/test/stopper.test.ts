// The Stopper is internal; its races decide when a stuck engine turn or custom action ends.
import { describe, expect, it } from 'vitest';
import { Stopper, raceStop } from '../src/stopper.js';

const stopped = (): Error => new Error('stopped');

describe('raceStop', () => {
  it('settles like the promise when the stopper never aborts', async () => {
    const stopper = new Stopper();
    await expect(raceStop(Promise.resolve(1), stopper, stopped)).resolves.toBe(1);
    await expect(raceStop(Promise.reject(new Error('own')), stopper, stopped)).rejects.toThrow('own');
  });

  it('rejects with the abort error as soon as the stopper aborts, ignoring the promise later', async () => {
    const stopper = new Stopper();
    let resolve!: (v: number) => void;
    const race = raceStop(new Promise<number>((r) => (resolve = r)), stopper, stopped);
    stopper.abort('why');
    resolve(2);
    await expect(race).rejects.toThrow('stopped');
  });

  it('rejects at once on a stopper that has aborted already', async () => {
    const stopper = new Stopper();
    stopper.abort('why');
    let made = 0;
    const race = raceStop(new Promise<number>(() => undefined), stopper, () => {
      made++;
      return stopped();
    });
    await expect(race).rejects.toThrow('stopped');
    expect(made).toBe(1);
  });

  it('an abort after the race settled changes nothing, and every race is rejected at most once', async () => {
    const stopper = new Stopper();
    const first = raceStop(Promise.resolve('done'), stopper, stopped);
    await expect(first).resolves.toBe('done');
    const pending = raceStop(new Promise<string>(() => undefined), stopper, stopped);
    stopper.abort('later');
    stopper.abort('again'); // a second abort is ignored
    await expect(first).resolves.toBe('done');
    await expect(pending).rejects.toThrow('stopped');
    expect(stopper.aborted).toBe(true);
  });

  it('fires onAbort listeners and aborts a signal read before or after, with the first reason', () => {
    const stopper = new Stopper();
    const before = stopper.signal;
    const heard: string[] = [];
    const off = stopper.onAbort(() => heard.push('kept'));
    stopper.onAbort(() => heard.push('removed'))();
    stopper.abort('first');
    expect(heard).toEqual(['kept']);
    expect(before.aborted && before.reason === 'first').toBe(true);
    expect(stopper.signal.reason).toBe('first');
    stopper.onAbort(() => heard.push('late'));
    expect(heard).toEqual(['kept', 'late']);
    off();
  });
});
