// Replaying recorded crew sessions: 100 sessions of 10 turns each (a crew of triage and billing,
// a handoff, a tool call, the approvals policy on every call), exported from the store they were
// run on, replayed offline against a runner built afresh per session. Target (replay.md): the
// replay of all 100 sessions in at most 2 s in one process; printed next to the live run of the
// same sessions with a scripted model (runner, crew and store included in both).
import { MemoryCheckpointStore, type Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { exportCassettes, replay, type Cassette, type ReplayRunnerParts } from '@signalyard/replay';
import { createRunner, crewEngine, parseCrewConfig } from 'signalyard';
import { described, figure, measure, printTable } from '../../../scripts/bench/harness.mjs';
import { modes, withAls } from '../../../scripts/bench/modes.mjs';

const SESSIONS = 100;
const TURNS = 10;
const WORKLOAD = 'replay: 100 recorded 10-turn crew sessions';

const crew = parseCrewConfig(`
entry_point: triage
agents:
  - id: triage
  - id: billing
    tools: [lookup]
routing:
  signals:
    triage:
      - { signal: "[TO_BILLING]", target: billing }
      - { signal: "[ANSWERED]", target: "" }
    billing:
      - { signal: "[DONE]", target: "" }
approvals:
  default: allow
`);

const lookup: Tool = {
  name: 'lookup',
  parameters: { type: 'object' },
  execute: () => Promise.resolve({ status: 'shipped' }),
};

const liveModel = () =>
  scriptedModel((req) => {
    const last = req.messages.at(-1);
    if (req.agentId === 'triage') return req.messages.length % 3 === 0 ? 'Billing. [TO_BILLING]' : 'Sure. [ANSWERED]';
    if (last?.role === 'tool') return `Done: ${last.content} [DONE]`;
    return { content: '', toolCalls: [{ id: `c${req.messages.length}`, name: 'lookup', arguments: { order: 'A1' } }] };
  });

const build = (parts: {
  store: ReplayRunnerParts['store'];
  model: ReplayRunnerParts['model'];
  tools: readonly Tool[];
}) =>
  createRunner({
    agents: [{ id: 'desk', engine: crewEngine(crew, { model: parts.model, tools: parts.tools }) }],
    store: parts.store,
    maxHistoryMessages: 1000,
  });

/** The live run: every session's 10 turns with the scripted model; returns the store. */
async function live(): Promise<MemoryCheckpointStore> {
  const store = new MemoryCheckpointStore({ keepVersions: TURNS + 5 });
  const runner = build({ store, model: liveModel(), tools: [lookup] });
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, s) => {
      for (let t = 0; t < TURNS; t++)
        await runner.handle({ channel: 'web', peer: { kind: 'dm', id: `u${s}` }, text: `message ${t} about order A1` });
    }),
  );
  await runner.close();
  return store;
}

const cassettes: Cassette[] = await exportCassettes(await live());
const turns = cassettes.reduce((n, c) => n + c.turns.filter((t) => t.partial === undefined).length, 0);
if (cassettes.length !== SESSIONS || turns !== SESSIONS * TURNS)
  throw new Error(`expected ${SESSIONS} cassettes of ${TURNS} replayable turns, got ${cassettes.length} with ${turns}`);
const runner = (parts: ReplayRunnerParts) => build({ ...parts, tools: parts.tools([lookup]) });
const check = await replay(cassettes, { runner });
if (check.same !== SESSIONS)
  throw new Error(
    `expected every session same, got ${JSON.stringify(check.sessions.find((s) => s.status !== 'same'))}`,
  );

const results = await measure(
  withAls([
    { name: 'live run, scripted model (100 x 10 turns)', batch: 1, once: true, fn: live },
    { name: 'replay (100 x 10 turns)', batch: 1, once: true, fn: () => replay(cassettes, { runner }) },
  ]),
  { rounds: 5 },
);
printTable('@signalyard/replay: 100 recorded 10-turn crew sessions (per run of all of them)', results);
for (const [[liveRun, replayed], mode] of modes(results)) {
  figure({
    workload: WORKLOAD,
    name: `replay of all 100 sessions${mode}`,
    unit: 'ns',
    samples: replayed!.samples,
    target: { atMost: 2_000_000_000 },
    against: described(liveRun!, 'live run with a scripted model'),
  });
}
