// A crew with `resume_at: last_agent` under a Runner on SQLite: the conversation continues with
// the agent that answered — also after the runner restarts over the same file — in both
// handoff modes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatRequest, ChatResponse } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { createRunner, crewEngine, parseCrewConfig, type CrewResponse, type HandoffMode } from 'signalyard';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-crew-resume-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const crewIn = (mode: HandoffMode) =>
  parseCrewConfig(`
entry_point: triage
agents:
  - id: triage
  - id: billing
    description: Invoices, charges and refunds.
  - id: closer
settings:
  handoff_mode: ${mode}
  resume_at: last_agent
routing:
  signals:
    triage:
      - { signal: "[ROUTE_BILLING]", target: billing }
    billing:
      - { signal: "[RESOLVED]", target: "" }
      - { signal: "[CLOSE]", target: closer }
  agent_behaviors:
    closer: { is_terminal: true }
`);

/** Answers as the desk's agents would, handing off by marker or by transfer call. */
function deskModel(mode: HandoffMode) {
  const said = (r: ChatRequest): string => r.messages.findLast((m) => m.role === 'user')?.content ?? '';
  const handoff = (text: string, marker: string, tool: string): string | ChatResponse =>
    mode === 'marker'
      ? `${text} ${marker}`
      : { content: text, toolCalls: [{ id: `call-${r++}`, name: tool, arguments: { reason: 'routing' } }] };
  let r = 1;
  return scriptedModel((request) => {
    if (request.agentId === 'triage') return handoff('Billing will help.', '[ROUTE_BILLING]', 'transfer_to_billing');
    if (request.agentId === 'closer') return 'Case closed.';
    if (/bye/i.test(said(request))) return handoff('Closing your case.', '[CLOSE]', 'transfer_to_closer');
    return handoff(`Billing here, about "${said(request)}".`, '[RESOLVED]', 'finish');
  });
}

describe.each(['marker', 'tool'] as const)('resume_at: last_agent under a Runner on SQLite (%s mode)', (mode) => {
  it('the next message goes straight to billing, also on a new runner over the same file; a terminal end starts over', async () => {
    const path = join(dir, `${mode}.db`);
    const model = deskModel(mode);
    const open = () => {
      const store = new SqliteCheckpointStore({ path });
      const runner = createRunner({ agents: [{ id: 'desk', engine: crewEngine(crewIn(mode), { model }) }], store });
      return { store, runner };
    };
    const message = (text: string) => ({ channel: 'web', peer: { kind: 'dm' as const, id: 'c1' }, text });

    const first = open();
    const o1 = await first.runner.handle(message('charged twice'));
    expect(o1.output as CrewResponse).toMatchObject({ agentId: 'billing', handoffs: 1 });
    await first.runner.close();
    await first.store.close();

    const second = open();
    const o2 = await second.runner.handle(message('and the other invoice?'));
    expect(o2.output as CrewResponse).toMatchObject({
      agentId: 'billing',
      handoffs: 0,
      visibleContent: 'Billing here, about "and the other invoice?".',
    });
    expect(model.calls.map((c) => c.agentId)).toEqual(['triage', 'billing', 'billing']);
    // The page after a reload: one handoff, in the first turn only; no transfer call as a tool.
    const transcript = await second.runner.transcript(o2.sessionKey);
    expect(transcript).toEqual([
      { type: 'user', text: 'charged twice' },
      { type: 'assistant', agentId: 'triage', text: 'Billing will help.' },
      { type: 'handoff', from: 'triage', to: 'billing', via: 'signal' },
      { type: 'assistant', agentId: 'billing', text: 'Billing here, about "charged twice".' },
      { type: 'user', text: 'and the other invoice?' },
      { type: 'assistant', agentId: 'billing', text: 'Billing here, about "and the other invoice?".' },
    ]);

    // Billing hands over to the terminal closer: the next message starts at the entry point again.
    const o3 = await second.runner.handle(message('bye'));
    expect(o3.output as CrewResponse).toMatchObject({ agentId: 'closer', reason: 'terminal_agent' });
    await second.runner.close();
    await second.store.close();

    const third = open();
    await third.runner.handle(message('new problem: charged again'));
    expect(model.calls.slice(-3).map((c) => c.agentId)).toEqual(['closer', 'triage', 'billing']);
    await third.runner.close();
    await third.store.close();
  });
});
