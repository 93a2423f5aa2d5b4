// A real replay report for the inspector's tests: three sessions of a small crew recorded live,
// then replayed with today's configuration in which the handoff marker was renamed — the
// sessions that asked for a refund diverge at their handoff, the other one stays the same.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryCheckpointStore, type ChatModel, type CheckpointStore, type Plugin } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig } from '@signalyard/crew';
import { cassetteRecorder, loadCassettes, replay, type ReplayReport } from '@signalyard/replay';
import { createRunner, crewEngine } from 'signalyard';

const crew = (marker: string) =>
  parseCrewConfig(`
entry_point: triage
agents:
  - id: triage
  - id: billing
routing:
  signals:
    triage:
      - { signal: "${marker}", target: billing }
      - { signal: "[ANSWERED]", target: "" }
    billing:
      - { signal: "[DONE]", target: "" }
`);

const live = (): ChatModel =>
  scriptedModel((req) => {
    const user = req.messages.findLast((m) => m.role === 'user')?.content ?? '';
    if (req.agentId === 'triage')
      return user.includes('refund') ? 'Passing you to billing. [TO_BILLING]' : `Hello! [ANSWERED]`;
    return 'Refunded. [DONE]';
  });

const build = (parts: { store: CheckpointStore; model: ChatModel; plugins?: Plugin[] }, marker = '[TO_BILLING]') =>
  createRunner({
    agents: [{ id: 'desk', engine: crewEngine(crew(marker), { model: parts.model }) }],
    store: parts.store,
    ...(parts.plugins !== undefined && { plugins: parts.plugins }),
  });

const dm = (id: string, text: string) => ({ channel: 'web', peer: { kind: 'dm' as const, id }, text });

/** Records three sessions, replays them with the marker renamed; the report and its file. */
export async function replayReportFile(): Promise<{ report: ReplayReport; file: string; cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'inspector-replay-'));
  const recorder = cassetteRecorder({ dir: join(dir, 'cassettes') });
  const runner = build({
    store: recorder.store(new MemoryCheckpointStore()),
    model: recorder.model(live()),
    plugins: [recorder],
  });
  await runner.handle(dm('ann', 'hi there'));
  await runner.handle(dm('bob', 'hello'));
  await runner.handle(dm('bob', 'refund order A1 please'));
  await runner.handle(dm('cy', 'refund 40'));
  await runner.close();
  await recorder.flush();
  const report = await replay(await loadCassettes(join(dir, 'cassettes')), {
    runner: (parts) => build(parts, '[TO_REFUNDS]'),
  });
  const file = join(dir, 'report.json');
  writeFileSync(file, JSON.stringify(report, null, 2));
  return { report, file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
