import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runWorkersStory } from '../src/workers.js';

describe('the support desk with --workers 2', () => {
  it(
    'a worker killed mid-turn: another takes the session after its lease and finishes the conversation, each message once',
    { timeout: 180_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'support-desk-workers-'));
      const lines: string[] = [];
      try {
        const result = await runWorkersStory({
          path: join(dir, 'desk.db'),
          workers: 2,
          write: (line) => lines.push(line),
        });
        const { killed, settledBy, toolKeys } = result;
        expect(['w1', 'w2']).toContain(killed);
        // The tracking question was being answered by the killed worker; the other one settled it and the rest.
        expect(settledBy.slice(1)).toEqual([expect.not.stringContaining(killed), expect.not.stringContaining(killed)]);
        expect(lines).toContain(
          `   kill    ${killed} killed with SIGKILL mid-turn; its lease on the session runs out in 1.5 s`,
        );
        // The redelivered turn's tool call has the same idempotency key: <receiptId>:tool:0.
        expect(toolKeys).toHaveLength(2);
        expect(toolKeys[1]).toBe(toolKeys[0]);
        expect(toolKeys[0]).toMatch(/^[0-9a-f-]{36}:tool:0$/);
        expect(lines.filter((l) => l.startsWith('   = '))).toEqual([
          '   = completed',
          '   = completed',
          '   = completed',
        ]);
        const history = lines.slice(lines.findIndex((l) => l.includes('after the kill')) + 1);
        expect(history.filter((l) => l.startsWith('   user'))).toEqual([
          '   user      "My parcel for order 6120 never arrived"',
          '   user      "Can you check the tracking?"',
          '   user      "Please resend it"',
        ]);
        expect(history.filter((l) => l.startsWith('   tool'))).toEqual([
          '   tool      "held at the depot since Monday"',
        ]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
