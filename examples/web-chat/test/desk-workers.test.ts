// `--workers N` without a browser: the web tier and a worker process started as `start --workers`
// starts it (src/worker.ts, the desk's own model), over one SQLite file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { scriptedDeskModel, sessionKeyOf } from '../src/desk.js';
import { deskWebTier, spawnDeskWorkers } from '../src/desk-workers.js';

const work = mkdtempSync(join(tmpdir(), 'signalyard-web-chat-desk-workers-'));
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

it('a worker process applies what the web tier accepts, streams it to the web tier, and stays up until stopped', async () => {
  const dbPath = join(work, 'chat.db');
  const runner = deskWebTier({ dbPath, model: scriptedDeskModel() });
  await runner.transcript(sessionKeyOf('warm-up')); // the file's tables, before the worker opens it
  const [worker] = spawnDeskWorkers({ count: 1, dbPath });
  try {
    await worker!.ready;
    // A worker that exits fails the test at once instead of leaving the turn waiting.
    const died = worker!.exited.then(() => {
      throw new Error(`the worker exited: ${worker!.stderr()}`);
    });
    died.catch(() => undefined);
    for (const text of ['my invoice charged me twice', 'please refund $42']) {
      const turn = runner.stream({ channel: 'web', peer: { kind: 'dm', id: 'w-1' }, text });
      let deltas = 0;
      const read = (async () => {
        for await (const event of turn) if (event.type === 'text_delta') deltas++;
      })();
      await Promise.race([read, died]);
      expect((await turn.outcome).status).toBe('completed');
      expect(deltas).toBeGreaterThan(1); // token by token, from the other process
    }
    expect(worker!.process.exitCode).toBeNull(); // still up between turns and after them
    const transcript = await runner.transcript(sessionKeyOf('w-1'));
    expect(transcript.flatMap((e) => (e.type === 'user' ? [e.text] : []))).toEqual([
      'my invoice charged me twice',
      'please refund $42',
    ]);
  } finally {
    await worker?.stop();
    await runner.close();
  }
  expect(worker!.process.signalCode).toBeNull(); // it exited when asked (SIGTERM handled), not killed
}, 120_000);
