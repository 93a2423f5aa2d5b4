import { MemoryInbox } from '@signalyard/core';
import { inboxConformance } from '@signalyard/core/testing';
import { describe, it } from 'vitest';

// A clock per case, moved by the suite instead of waiting for real time.
inboxConformance(
  'MemoryInbox',
  (limits) => {
    let now = Date.parse('2026-01-01T00:00:00.000Z');
    return {
      inbox: new MemoryInbox({ ...limits, clock: { now: () => now } }),
      advanceTime: (ms) => {
        now += ms;
      },
    };
  },
  { describe, it },
);

// The factory may return the inbox itself, as checkpointStoreConformance's returns the store:
// the suite then waits for real time to pass where a case needs it.
inboxConformance('MemoryInbox (the factory returns the inbox)', (limits) => new MemoryInbox(limits), { describe, it });
