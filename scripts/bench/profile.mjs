// Where the time goes, for a figure out of reach: a V8 CPU profile of the case (through
// node:inspector, in the benchmark's own process, so JIT state is the measured one), summarised
// as the functions with the most self time. `pnpm bench` prints it under a missed figure instead
// of only saying "NOT MET"; `node scripts/bench/profile-summary.mjs file.cpuprofile` summarises a
// profile written by `node --cpu-prof`.
import { Session } from 'node:inspector/promises';
import { leaveAls } from './modes.mjs';

/** The `top` functions of a CPU profile by self time: `[{ percent, name }]`, `name` as `fn file:line`. */
export function selfTimes(profile, top = 15) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    // The profiler's own work (an in-process inspector session's message dispatch) and idle time
    // are not the case's: left out, and the rest adds up to 100 %.
    if (url === '' && (functionName === 'dispatch' || functionName === '(idle)')) return;
    total += dt;
    const where = url === '' ? '' : ` ${url.replace(/^.*\/(packages|node_modules)\//, '$1/')}:${lineNumber + 1}`;
    const name = `${functionName === '' ? '(anonymous)' : functionName}${where}`;
    self.set(name, (self.get(name) ?? 0) + dt);
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({ percent: total === 0 ? 0 : (100 * us) / total, name }));
}

/** Profiles `runs` calls of `fn` (awaited one after another) and returns the CPU profile. */
async function profileCalls(fn, runs) {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 50 });
    await session.post('Profiler.start');
    for (let i = 0; i < runs; i++) await fn();
    const { profile } = await session.post('Profiler.stop');
    return profile;
  } finally {
    session.disconnect();
    leaveAls(); // a profile in the @als mode leaves no promise hooks on for what is measured next
  }
}

/**
 * When `record` (a figure) missed its target, profiles `runs` calls of `fn` — the case behind the
 * figure, in the figure's mode — and prints where the time goes. Does nothing for a met figure.
 */
export async function explainIfMissed(record, fn, { runs = 3000, top = 12 } = {}) {
  if (record.target === undefined || record.met) return;
  const profile = await profileCalls(fn, runs);
  console.log(`  where the time goes in "${record.name}" (CPU profile of ${runs} calls, self time):`);
  const rows = selfTimes(profile, top);
  if (rows.length === 0) console.log('  (no samples outside the profiler itself: rerun with `node --cpu-prof`)');
  for (const { percent, name } of rows) console.log(`  ${percent.toFixed(1).padStart(5)} %  ${name}`);
}
