import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { describe, expect, it } from 'vitest';
import { runSupportDesk } from '@signalyard-examples/support-desk';

/** A run of the story: its lines, the pieces its streamed replies arrived in, the audit log's statuses and approvals. */
async function transcript(
  store?: SqliteCheckpointStore,
): Promise<{ lines: string[]; pieces: string[]; statuses: string[]; approvals: unknown[] }> {
  const lines: string[] = [];
  const pieces: string[] = [];
  let open = '';
  const audit = await runSupportDesk({
    write: (line) => lines.push(line),
    // A reply line arrives in pieces (its start, each delta, its end): kept, and joined into lines.
    writeDelta: (text) => {
      pieces.push(text);
      const parts = (open + text).split('\n');
      open = parts.pop() ?? '';
      lines.push(...parts);
    },
    ...(store === undefined ? {} : { store }),
  });
  expect(open).toBe('');
  return {
    lines,
    pieces,
    statuses: audit.map((e) => e.status),
    approvals: audit.flatMap((e) => (e.approvals === undefined ? [] : [[e.status, e.approvals]])),
  };
}

/** The deltas of the streamed reply line that starts with `start` (e.g. `   reply   billing: "I see`). */
const deltasOf = (pieces: string[], start: string): string[] => {
  const at = pieces.findIndex((p, i) => p.startsWith('   reply   ') && (p + (pieces[i + 1] ?? '')).startsWith(start));
  expect(at, `no streamed reply starting ${start}`).toBeGreaterThanOrEqual(0);
  const end = pieces.indexOf('"\n', at);
  return pieces.slice(at + 1, end);
};

/** Routing markers: `[ROUTE_BILLING]`, `[PROPOSE_FIX]`, `[REFUNDED]`, … */
const MARKER = /\[[A-Z_]+\]/;

const after = (lines: string[], heading: string): string[] => {
  const at = lines.findIndex((l) => l.includes(heading));
  expect(at, `no line containing ${heading}`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((l, i) => i > at && l.startsWith('──'));
  return lines.slice(at, end === -1 ? undefined : end);
};

describe('the support desk example', () => {
  it('tells the whole story: routing, FSM gating, crew handoffs, a refund held for approval, a paused and resumed pipeline, a restart, the rate limit', async () => {
    const { lines, pieces, statuses, approvals } = await transcript();

    // alice on telegram: the crew hands off, the crew's outcome moves the FSM. The customer sees
    // each agent's reply as it streams, under its name, without the markers; the handoff is the
    // operator's line between them.
    const first = after(lines, '"Hi, my invoice charged me twice"');
    expect(first).toContain('   agent   desk · session agent:desk:dm:alice · matched by default');
    expect(first.filter((l) => l.startsWith('   reply') || l.startsWith('   crew'))).toEqual([
      '   reply   triage: "This is a billing matter."',
      '   crew    triage → billing (tool transfer_to_billing)',
      '   reply   billing: "I see a duplicate charge of $42 on invoice INV-881. Shall I refund it?"',
    ]);
    expect(first).toContain('   fsm     triaging → awaiting_confirmation (propose)');

    // The replies arrived as deltas, in more than one piece, and joined to what the customer saw.
    const billing = deltasOf(pieces, '   reply   billing: "I see');
    expect(billing.length).toBeGreaterThan(1);
    expect(billing.join('')).toBe('I see a duplicate charge of $42 on invoice INV-881. Shall I refund it?');
    // No marker ever reaches the customer: not in a delta, not in a reply line.
    expect(pieces.filter((p) => MARKER.test(p))).toEqual([]);
    const replies = lines.filter((l) => l.startsWith('   reply'));
    expect(replies.length).toBeGreaterThan(10);
    expect(replies.filter((l) => MARKER.test(l))).toEqual([]);
    // A page reload shows the conversation without markers, the handoff as an entry.
    expect(after(lines, 'agent:desk:dm:alice, as a chat page shows it after a reload')).toEqual([
      '── agent:desk:dm:alice, as a chat page shows it after a reload (runner.transcript)',
      '   user    "Hi, my invoice charged me twice"',
      '   triage  "This is a billing matter."',
      '   handoff triage → billing (signal)',
      '   billing "I see a duplicate charge of $42 on invoice INV-881. Shall I refund it?"',
      '   user    "yes please"',
      '   user    "any news?"',
      '',
      expect.stringMatching(/^Audit log: /),
    ]);

    // alice on slack lands in the same session (identity link); the strategy tier decides.
    const slack = after(lines, '"yes please"');
    expect(slack).toContain('   agent   desk · session agent:desk:dm:alice · matched by default');
    expect(slack).toContain('   route   strategy tier, route "confirm-yes" → transition(confirm)');

    // A gated message is rejected while the FSM is resolving.
    expect(after(lines, '"any news?"')).toEqual(
      expect.arrayContaining([
        '   route   strategy tier, route "busy-resolving" → reject(resolving)',
        '   = rejected (resolving)',
      ]),
    );

    // The VIP is routed to their own agent by the peer binding.
    expect(after(lines, '"I need help with my account"')).toContain(
      '   agent   vip · session agent:vip:telegram:dm:4242 · matched by peer',
    );

    // Two more messages while the VIP's crew is answering: collected, answered by one crew run.
    expect(lines).toContain(
      '── telegram · dm 4242: "the one ending 4417"   (sent while the crew is answering: the vip agent collects)',
    );
    const collected = after(lines, 'the 2 messages sent meanwhile');
    expect(collected).toEqual([
      '── the 2 messages sent meanwhile: each routed on its own, answered by one crew run',
      '   route   no route: runner default → continue',
      '   route   no route: runner default → continue',
      '   reply   concierge: "Your card ending 4417 is blocked for your safety; a senior agent is unblocking it now."',
      '   = completed for "it\'s about my card" (mergedWith 2)',
      '   = completed for "the one ending 4417" (mergedWith 2)',
      '',
    ]);

    // The review pipeline pauses for confirmation, survives the restart, and resumes on "yes".
    const review = after(lines, '"Review refund R-17 for $250"');
    expect(review).toContain('   agent   reviews · session agent:reviews:slack:channel:c-refunds · matched by team');
    expect(review).toContain('   pipeline interrupt: confirmation (paused)');
    expect(review).toContain('   = paused');
    expect(lines).toContain('   agent:desk:dm:alice continues: FSM resolving, 7 messages, checkpoint v3');
    const approved = after(lines, '"yes"   (the reviewer approves');
    expect(approved).toContain('   reply   reviews: "Refund R-17: $250 refunded (RF-1017)."');
    expect(approved).toContain('   = completed');

    // A refund over $100: the crew's approvals policy holds the call; the turn pauses.
    const refund = after(lines, '"Please refund order 5531, $420: it arrived broken"');
    expect(refund).toEqual(
      expect.arrayContaining([
        '   crew    triage → billing (tool transfer_to_billing)',
        '   reply   billing: "Refunding order 5531."',
        '   approval ap-1 asked: billing calls refund {"order":"5531","amount":420} (refunds over $100 need a reviewer)',
        '   = paused (awaiting approval: ap-1)',
      ]),
    );
    expect(refund.filter((l) => l.startsWith('   tool'))).toEqual([]);
    // The customer's own "go ahead" is saved but decides nothing.
    expect(after(lines, '"go ahead, please"')).toEqual(
      expect.arrayContaining([
        '   route   no route: runner default → reject(awaiting_approval)',
        '   = rejected (awaiting_approval)',
      ]),
    );
    // The approval survives the restart (the checkpoint is the truth).
    expect(lines).toContain('   agent:desk:telegram:dm:1003 still waits: ap-1 (refund $420)');
    // Someone who is not a reviewer is refused by a route; nothing runs.
    const refused = after(lines, 'dave@support approves ap-1');
    expect(refused).toContain('   route   agent tier, route "reviewers-only" → reject(not a reviewer)');
    expect(refused).toContain('   = rejected (not a reviewer)');
    expect(refused.filter((l) => l.startsWith('   tool'))).toEqual([]);
    // The reviewer approves on the new runner: the refund runs once, then billing's reply follows.
    expect(after(lines, 'rita@finance approves ap-1 of agent:desk:telegram:dm:1003   (a reviewer')).toEqual([
      '── cli: rita@finance approves ap-1 of agent:desk:telegram:dm:1003   (a reviewer, on the new runner)',
      '   route   no route: runner default → continue',
      '   approval ap-1 approved',
      '   tool    refund → "$420 refunded for order 5531 (RF-2001)"',
      '   reply   billing: "$420 refunded for order 5531 (RF-2001): it is on its way to your card."',
      '   = completed',
      '',
    ]);
    // Approving again finds nothing pending: the refund is not repeated.
    expect(after(lines, '(again: nothing pending')).toEqual(
      expect.arrayContaining([
        '   route   no route: runner default → reject(no_pending_approval)',
        '   = rejected (no_pending_approval)',
        '   refunds carried out: 1 — order 5531, $420 (RF-2001)',
      ]),
    );
    // carol's next message goes straight to billing, the agent that answered her (resume_at:
    // last_agent): no triage, no second handoff.
    expect(after(lines, '"Thanks! Can you email me the receipt?"')).toEqual([
      '── telegram · dm 1003: "Thanks! Can you email me the receipt?"   (carol again: the conversation continues with billing, no second triage (resume_at: last_agent))',
      '   agent   desk · session agent:desk:telegram:dm:1003 · matched by default',
      '   route   no route: runner default → continue',
      // billing looks the order up through the order-lookup MCP server (its `orders_get_order` tool).
      '   reply   billing: "Looking the order up."',
      '   tool    orders_get_order (MCP server orders) → {"order":"5531","item":"Espresso machine","total":420,"status":"delivered broken"}',
      '   reply   billing: "The receipt for order 5531 (Espresso machine, $420) is on its way to your email."',
      '   = completed',
      '',
    ]);
    // The audit log records who decided what, also when a route refused it.
    expect(approvals).toEqual([
      ['rejected', [{ id: 'ap-1', approved: true, by: 'dave@support' }]],
      ['completed', [{ id: 'ap-1', approved: true, by: 'rita@finance' }]],
      ['rejected', [{ id: 'ap-1', approved: true, by: 'rita@finance' }]],
    ]);

    // The parallel group, and the FSM moved by the turn's actions.
    const crash = after(lines, '"The app crashes on startup"');
    expect(crash.filter((l) => l.startsWith('   reply') || l.startsWith('   crew'))).toEqual([
      '   reply   triage: "Could be the app or the account; asking both teams."',
      '   crew    parallel group investigate: billing + tech',
      // billing and tech stream at once; the terminal shows one reply line at a time
      expect.stringMatching(/^ {3}reply {3}(billing|tech): /),
      expect.stringMatching(/^ {3}reply {3}(billing|tech): /),
      '   crew    triage → lead (parallel)',
      '   reply   lead: "Clearing the app cache fixes this; shall I send you the steps?"',
    ]);
    expect(crash).toEqual(
      expect.arrayContaining([
        '   reply   billing: "Billing: the account is paid up; nothing to do on our side."',
        '   reply   tech: "Tech: version 3.2 crashes at startup when its cache is corrupt."',
      ]),
    );

    // The rate limit rejects the fourth message in a minute from the plugin tier.
    expect(after(lines, '"HELLO???"')).toContain('   route   plugin tier, route "rate-limit" → reject(rate_limited)');

    // One audit entry per signal.
    expect(statuses).toEqual([
      'completed',
      'completed',
      'rejected',
      'completed',
      'completed',
      'completed',
      'paused', // the review pipeline
      'paused', // carol's refund, held for approval
      'rejected', // carol's "go ahead"
      'rejected', // dave is not a reviewer
      'completed', // rita approves: the refund runs
      'rejected', // rita again: nothing pending
      'completed', // carol's receipt, answered by billing
      'completed',
      'completed',
      'completed',
      'completed',
      'completed',
      'rejected',
    ]);
  });

  it("with a SQLite store, a second run continues the first run's sessions", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'support-desk-'));
    const path = join(dir, 'desk.db');
    try {
      const one = new SqliteCheckpointStore({ path });
      await transcript(one);
      await one.close();
      const two = new SqliteCheckpointStore({ path });
      const { lines } = await transcript(two);
      await two.close();
      expect(lines).toContain(
        'The store already holds 5 sessions from an earlier run; they continue where they stopped:',
      );
      // carol's refund was decided in the first run; her new request is held under a new id, and runs once.
      expect(lines).toContain('   agent:desk:telegram:dm:1003 still waits: ap-2 (refund $420)');
      expect(lines).toContain('   refunds carried out: 1 — order 5531, $420 (RF-2001)');
      expect(lines.find((l) => l.startsWith('   agent:desk:dm:alice:'))).toMatch(/FSM closed/);
      // The second run's first message reopens alice's closed case.
      expect(after(lines, '"Hi, my invoice charged me twice"')).toContain('   fsm     closed → triaging (reopen)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
