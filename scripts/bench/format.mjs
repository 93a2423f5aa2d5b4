// How figures read: durations scale from ns to ms, ratios end in `x`, rates in `/s`.

const grouped = (n) => Math.round(n).toLocaleString('en-US');
const digits = (n) => (Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : 2);

/** A duration given in nanoseconds: `57.2 ns`, `3.31 µs`, `1.52 ms`. */
export function formatNs(ns) {
  const abs = Math.abs(ns);
  if (abs >= 1e6) return `${(ns / 1e6).toFixed(digits(ns / 1e6))} ms`;
  if (abs >= 1e3) return `${(ns / 1e3).toFixed(digits(ns / 1e3))} µs`;
  return `${ns.toFixed(abs >= 100 ? 0 : 1)} ns`;
}

/** A value in its unit: 'ns' (a duration), 'x' (a ratio) or '/s' (a rate). */
export function formatValue(value, unit) {
  switch (unit) {
    case 'ns':
      return formatNs(value);
    case 'x':
      return `${value.toFixed(digits(value))}x`;
    case '/s':
      return value >= 1e6 ? `${(value / 1e6).toFixed(2)} M/s` : `${grouped(value)}/s`;
    default:
      throw new Error(`unknown unit ${JSON.stringify(unit)} (expected 'ns', 'x' or '/s')`);
  }
}

/** `<= 2x`, `>= 100,000/s`; an empty string without a target. */
export function formatTarget(target, unit) {
  if (target === undefined) return '';
  const round = (v) => formatValue(v, unit).replace(/\.0+(?=\D|$)/, ''); // `2x`, not `2.00x`
  return 'atMost' in target ? `<= ${round(target.atMost)}` : `>= ${round(target.atLeast)}`;
}

/** `min – max` of a figure's samples, in its unit. */
export function formatSpread({ min, max }, unit) {
  return `${formatValue(min, unit)} – ${formatValue(max, unit)}`;
}

/**
 * The verdict on a figure: `met` / `NOT MET` on its median, with the count of samples that
 * agree when they do not all agree (one noisy round shows as `met (4/5 samples)`), or `info`.
 */
export function formatResult({ target, met, samplesMet, samples }) {
  if (target === undefined) return 'info';
  const n = samples.length;
  if (met) return samplesMet === n ? 'met' : `met (${samplesMet}/${n} samples)`;
  return samplesMet === 0 ? 'NOT MET' : `NOT MET (${samplesMet}/${n} samples met)`;
}

/** Left-aligned columns separated by `|`, with a header rule: readable in a terminal and in Markdown. */
export function renderTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
