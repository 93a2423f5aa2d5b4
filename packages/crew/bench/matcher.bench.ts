// SignalMatcher on the shared text-marker workload (20 markers, 2 KB agent replies) next to the
// plain-JS floor (20 `String.prototype.includes` calls), in one process run.
// Contract (design/crew.md): ≥ 100,000 replies per second for a 2 KB reply against 20 signals;
// the aim is within 3× of the floor on the no-hit text, despite the three matching levels.
import { SignalMatcher, signalMatches } from '@signalyard/crew';
import { loadShared, measure, printRatio, printTable } from '../../../scripts/bench-harness.mjs';

const W = await loadShared('workloads.mjs');
const F = await loadShared('floor.mjs');
const MARKERS = W.MARKERS as string[];
const TEXTS = W.TEXTS as { miss: string; late: string };
const floor = F.findMarkersIncludes as (text: string, markers: readonly string[]) => string[] | null;

const matcher = new SignalMatcher(MARKERS);

// Same answers as the floor, or the figures mean nothing.
for (const [name, text] of Object.entries(TEXTS)) {
  const got = matcher.matchAll(text).map((i) => MARKERS[i]);
  const want = floor(text, MARKERS) ?? [];
  if (JSON.stringify(got) !== JSON.stringify(want))
    throw new Error(`${name}: matcher found ${JSON.stringify(got)}, floor ${JSON.stringify(want)}`);
}
if (matcher.matchAll(TEXTS.late).length !== 1 || matcher.first(TEXTS.miss) !== undefined)
  throw new Error('unexpected workload');

const BATCH = 1000;
let sink = 0;
const results = await measure([
  {
    name: 'floor: 20 × includes, miss',
    batch: BATCH,
    fn: () => {
      for (let i = 0; i < BATCH; i++) if (floor(TEXTS.miss, MARKERS) !== null) sink++;
    },
  },
  {
    name: 'SignalMatcher.matchAll, miss',
    batch: BATCH,
    fn: () => {
      for (let i = 0; i < BATCH; i++) sink += matcher.matchAll(TEXTS.miss).length;
    },
  },
  {
    name: 'floor: 20 × includes, late',
    batch: BATCH,
    fn: () => {
      for (let i = 0; i < BATCH; i++) if (floor(TEXTS.late, MARKERS) !== null) sink++;
    },
  },
  {
    name: 'SignalMatcher.matchAll, late',
    batch: BATCH,
    fn: () => {
      for (let i = 0; i < BATCH; i++) sink += matcher.matchAll(TEXTS.late).length;
    },
  },
  {
    name: 'SignalMatcher.first, miss',
    batch: BATCH,
    fn: () => {
      for (let i = 0; i < BATCH; i++) if (matcher.first(TEXTS.miss) !== undefined) sink++;
    },
  },
  {
    name: '20 × signalMatches (uncompiled), miss',
    batch: BATCH,
    fn: () => {
      for (let i = 0; i < BATCH; i++)
        for (let j = 0; j < MARKERS.length; j++) if (signalMatches(MARKERS[j]!, TEXTS.miss)) sink++;
    },
  },
]);
printTable('@signalyard/crew: 2 KB reply × 20 markers (ns per reply)', results);
const [floorMiss, matchMiss, floorLate, matchLate] = results;
console.log('');
printRatio('matchAll vs 20 × includes floor, no-hit text', matchMiss!.nsPerOp / floorMiss!.nsPerOp, 3, 'max');
printRatio('matchAll vs 20 × includes floor, late-hit text', matchLate!.nsPerOp / floorLate!.nsPerOp, 3, 'max');
for (const r of [matchMiss!, matchLate!]) {
  const ok = r.opsPerSec >= 100_000;
  console.log(
    `${r.name}: ${Math.round(r.opsPerSec).toLocaleString('en-US')} replies/s   target >= 100,000   ${ok ? 'MET' : 'NOT MET'}`,
  );
}
if (sink < 0) console.log(sink);
