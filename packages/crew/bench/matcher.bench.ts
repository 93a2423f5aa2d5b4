// SignalMatcher on the text-marker workload (20 markers, 2 KB agent replies) next to the plain-JS
// floor (20 `String.prototype.includes` calls), in one process run.
// Targets (docs/crew.md, issue 24): ≥ 100,000 replies per second for a 2 KB reply against 20
// signals, and at most the floor's time (1×) with no marker and with one near the end: one pass
// over the reply for all three levels, against twenty.
import { SignalMatcher, signalMatches } from '@signalyard/crew';
import { findMarkersIncludes as floor } from '../../../scripts/bench/floor.mjs';
import { described, figure, measure, perSecond, printTable, ratio } from '../../../scripts/bench/harness.mjs';
import { MARKERS, TEXTS } from '../../../scripts/bench/workloads.mjs';

const WORKLOAD = 'crew: 2 KB reply x 20 markers';

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
printTable('@signalyard/crew: 2 KB reply × 20 markers (per reply)', results);
const [floorMiss, matchMiss, floorLate, matchLate] = results;
for (const [text, ours, base] of [
  ['no-hit', matchMiss!, floorMiss!],
  ['late-hit', matchLate!, floorLate!],
] as const) {
  figure({
    workload: WORKLOAD,
    name: `matchAll() time / includes floor time, ${text} text`,
    unit: 'x',
    samples: ratio(ours, base),
    target: { atMost: 1 },
    against: described(base, 'floor: 20 × includes'),
  });
  figure({
    workload: WORKLOAD,
    name: `matchAll() replies per second, ${text} text`,
    unit: '/s',
    samples: perSecond(ours),
    target: { atLeast: 100_000 },
  });
}
if (sink < 0) console.log(sink);
