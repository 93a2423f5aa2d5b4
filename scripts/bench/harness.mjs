// What a benchmark file imports: measuring, the per-task table and figures. Workloads and
// floors come from ./workloads.mjs and ./floor.mjs.
export { measure, MIN_ROUNDS } from './measure.mjs';
export { printTable } from './table.mjs';
export { figure, ratio, difference, perSecond, described } from './figures.mjs';
export { median } from './stats.mjs';
