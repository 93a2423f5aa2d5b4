// Small statistics over a figure's samples (one value per measuring round).

/** The median of `values` (the mean of the two middle values for an even count). */
export function median(values) {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The smallest and largest of `values`. */
export function range(values) {
  return { min: Math.min(...values), max: Math.max(...values) };
}

/** Whether `value` meets `target` ({ atMost } or { atLeast }); true when there is no target. */
export function meets(value, target) {
  if (target === undefined) return true;
  return 'atMost' in target ? value <= target.atMost : value >= target.atLeast;
}
