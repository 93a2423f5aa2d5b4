// Growth figures: how much longer a call takes on 4× the input, for the complexity checks that
// used to be test assertions (tests never assert timings). Linear work comes out near 4×,
// quadratic near 16×; the target, 8×, lies between them. Each round times the call on both
// inputs once, one after the other, so a busy machine slows both alike and the per-round ratio
// holds.
import { measure } from './measure.mjs';
import { figure, ratio } from './figures.mjs';

const kb = (text) => `${Math.round(text.length / 1024).toLocaleString('en-US')} KB`;

/**
 * For each `[name, make, n?]` of `forms`: times `run(make(n))` against `run(make(4 * n))` (a call
 * that throws still counts: a rejected input is a full pass over it) and records the ratio as a
 * figure of `workload` with the target `atMost`. `maxLength`: the inputs must be shorter (a
 * loader's size limit would otherwise turn the larger one away unread). Returns the figures.
 */
export async function growth({ workload, forms, n: defaultN, run, atMost = 8, maxLength = Infinity }) {
  const call = (input) => () => {
    try {
      run(input);
    } catch {
      // rejected: still read whole
    }
  };
  const figures = [];
  for (const [name, make, n = defaultN] of forms) {
    const small = make(n);
    const large = make(4 * n);
    if (large.length > maxLength) {
      throw new Error(`${name}: the input at 4n = ${4 * n} has ${large.length} characters, over ${maxLength}`);
    }
    const [s, l] = await measure([
      { name: `${name}, n`, batch: 1, once: true, fn: call(small) },
      { name: `${name}, 4n`, batch: 1, once: true, fn: call(large) },
    ]);
    figures.push(
      figure({
        workload,
        name: `${name}: time on 4× the input`,
        unit: 'x',
        samples: ratio(l, s),
        target: { atMost },
        against: `${kb(small)} → ${kb(large)}; linear 4×, quadratic 16×`,
      }),
    );
  }
  return figures;
}
