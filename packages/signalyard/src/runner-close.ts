import { AbortedError } from '@signalyard/core';
import type { RunnerInbox } from './runner-inbox.js';
import type { SessionQueue } from './session-queue.js';

/**
 * The signals' part of `runner.close()`: the inbox stops taking entries and queued signals will
 * never run (their entries stay in the inbox); turns in flight get `closeTimeoutMs` to finish,
 * then are aborted (`AbortedError`) and awaited; last, the inbox's leases are released.
 * @internal
 */
export async function drainOnClose(
  queue: SessionQueue,
  inbox: RunnerInbox | undefined,
  closeTimeoutMs: number,
): Promise<void> {
  inbox?.stopIntake();
  const loops = queue.stopAllQueued();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      resolve('timeout');
    }, closeTimeoutMs);
  });
  const finished = await Promise.race([Promise.all(loops).then(() => 'done' as const), timeout]);
  clearTimeout(timer);
  if (finished === 'timeout') {
    const reason = new AbortedError({ message: 'The runner closed' });
    inbox?.abortAll(reason);
    queue.abortRunning(reason);
    await Promise.all(queue.loops());
  }
  await inbox?.releaseAll();
}
