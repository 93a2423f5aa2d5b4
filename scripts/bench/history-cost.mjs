// The cost of history, for any CheckpointStore (the SQLite and PostgreSQL benchmarks share it):
// a save with keepVersions 20 against one with keepVersions 0, and history() of a key with 20
// kept versions, measured side by side in one process, printed and recorded as figures with the
// targets of history.md (save <= 1.5x, history() <= 1 ms).
import { measure } from './measure.mjs';
import { printTable } from './table.mjs';
import { described, figure, ratio } from './figures.mjs';

const KEEP = 20;

/**
 * Measures the cost of history on the stores `open` makes. `open({ keepVersions })` returns a
 * fresh store (an empty table or file of its own, migrated); `label` names the store in the
 * output (`store-sqlite`). Every key is saved keepVersions + 1 times before measuring, so both
 * stores are measured in their steady state (the one with history evicting its oldest version
 * on each save) rather than while the history fills. Saves go one at a time, round robin over
 * `keys` keys, `batch` per call. Closes the stores; returns the three results.
 */
export async function historyCost({ label, open, checkpoint, machine, keys = 100, batch = 200, time = 1000 }) {
  const bare = await open({ keepVersions: 0 });
  const kept = await open({ keepVersions: KEEP });
  try {
    const names = Array.from({ length: keys }, (_, i) => `agent:main:saves-${i}`);
    const saves = (store) => {
      const versions = new Array(keys).fill(0);
      const step = async (i) => {
        const k = i % keys;
        versions[k] = await store.save(names[k], checkpoint, versions[k]);
      };
      return { versions, step };
    };
    const bareSaves = saves(bare);
    const keptSaves = saves(kept);
    for (let i = 0; i < keys * (KEEP + 1); i++) {
      await bareSaves.step(i);
      await keptSaves.step(i);
    }
    const walked = 'agent:main:walked';
    for (let v = 0; v <= KEEP; v++) await kept.save(walked, checkpoint, v);
    const HISTORY_CALLS = 20;
    const run = (s) => {
      let next = 0;
      return async () => {
        for (let i = 0; i < batch; i++) await s.step(next++);
      };
    };
    const results = await measure(
      [
        { name: 'save, keepVersions 0 (current only)', batch, fn: run(bareSaves) },
        { name: `save, keepVersions ${KEEP}`, batch, fn: run(keptSaves) },
        {
          name: `history() of ${KEEP} versions + current`,
          batch: HISTORY_CALLS,
          fn: async () => {
            for (let i = 0; i < HISTORY_CALLS; i++) {
              let n = 0;
              for await (const _version of kept.history(walked)) n++;
              if (n !== KEEP + 1) throw new Error(`history listed ${n} versions, expected ${KEEP + 1}`);
            }
          },
        },
      ],
      { time, warmupTime: 300 },
    );
    printTable(`${label}: the cost of keeping history (per call) on ${machine}`, results);
    const [saveBare, saveKept, listHistory] = results;
    figure({
      workload: `${label}: save with history (keepVersions ${KEEP}), 2 KB checkpoint`,
      name: 'save with history / save without',
      unit: 'x',
      samples: ratio(saveKept, saveBare),
      target: { atMost: 1.5 },
      against: described(saveBare, 'save with keepVersions 0'),
    });
    figure({
      workload: `${label}: history() of a session with ${KEEP} kept versions`,
      name: `history() listing ${KEEP + 1} versions`,
      unit: 'ns',
      samples: listHistory.samples,
      target: { atMost: 1_000_000 },
    });
    // The wall time above includes waiting for a CPU on a loaded machine; the CPU time this
    // process spends per call (user + system, 5 rounds) is what the call costs on a quiet one,
    // the database server's own work aside.
    const cpu = [];
    for (let round = 0; round < 5; round++) {
      const before = process.cpuUsage();
      for (let i = 0; i < HISTORY_CALLS; i++) for await (const _version of kept.history(walked));
      const used = process.cpuUsage(before);
      cpu.push(((used.user + used.system) * 1000) / HISTORY_CALLS);
    }
    const cpuOf = async (fn) => {
      const before = process.cpuUsage();
      await fn();
      const used = process.cpuUsage(before);
      return used.user + used.system;
    };
    const bareRun = run(bareSaves);
    const keptRun = run(keptSaves);
    const saveCpu = [];
    for (let round = 0; round < 5; round++) saveCpu.push((await cpuOf(keptRun)) / (await cpuOf(bareRun)));
    figure({
      workload: `${label}: save with history (keepVersions ${KEEP}), 2 KB checkpoint`,
      name: 'the same, CPU time of this process',
      unit: 'x',
      samples: saveCpu,
      against: 'wall-time ratio above, less the wait for a CPU',
    });
    figure({
      workload: `${label}: history() of a session with ${KEEP} kept versions`,
      name: 'history(): CPU time of this process per call',
      unit: 'ns',
      samples: cpu,
      against: 'wall time above, less the wait for a CPU',
    });
    return results;
  } finally {
    await bare.close?.();
    await kept.close?.();
  }
}
