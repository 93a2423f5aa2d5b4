// The per-task table a benchmark prints after measuring: median ns per operation, the spread
// of the rounds, and operations per second.
import { formatNs, renderTable } from './format.mjs';

/** Prints a titled table of measured tasks. */
export function printTable(title, results) {
  const rounds = Math.max(...results.map((r) => r.samples.length));
  console.log(`\n## ${title}\n`);
  console.log(
    renderTable(
      ['task', 'median per op', `spread (min – max of ${rounds})`, 'ops/s'],
      results.map((r) => [
        r.name,
        formatNs(r.nsPerOp),
        `${formatNs(Math.min(...r.samples))} – ${formatNs(Math.max(...r.samples))}`,
        Math.round(r.opsPerSec).toLocaleString('en-US'),
      ]),
    ),
  );
  console.log('');
}
