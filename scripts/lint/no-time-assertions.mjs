// ESLint rule `signalyard/no-time-assertions` (eslint.config.js turns it on for test files):
// a test never asserts how long something took. On a loaded machine (2 cores, other test runs
// beside it) a wall-clock bound or a growth ratio of timings fails at random. Use fake timers,
// counted operations or step counts instead, or measure it in `pnpm bench`.
//
// What it reports: an `expect(…)` / `assert…(…)` call, or a matcher's argument, that holds a
// duration. A duration is
// - a difference with a clock reading on one side: `performance.now() - start`, `Date.now() - t0`,
//   `end - start` where `end` or `start` was read from a clock (`performance.now()`, `Date.now()`,
//   `new Date().getTime()`, `process.hrtime…()`), directly or through variables and properties
//   (`fired.at = performance.now()`);
// - a measurement helper's result: `process.hrtime(start)`, `process.cpuUsage(start)`,
//   `growthFactor(…)`;
// - a variable or property assigned a duration (`const elapsed = performance.now() - t0`).
// A clock reading alone (`expect(clock.now()).toBe(Date.now())` under fake timers) is no duration.
// The names are followed within one file, by name: a heuristic for code review, not a proof.

const MESSAGE =
  'Tests never assert timings: {{what}} is a duration. Use fake timers (vi.useFakeTimers), counted ' +
  'operations or step counts, or measure it in `pnpm bench`.';

/** `a.b.c` for a chain of identifiers and non-computed members, else undefined. */
function pathOf(node) {
  if (node.type === 'Identifier') return node.name;
  if (node.type === 'ThisExpression') return 'this';
  if (node.type === 'MemberExpression' && !node.computed && node.property.type === 'Identifier') {
    const object = pathOf(node.object);
    return object === undefined ? undefined : `${object}.${node.property.name}`;
  }
  return undefined;
}

/** `performance.now()`, `Date.now()`, `new Date().getTime()`, `process.hrtime…()`. */
function isClockReading(node) {
  if (node.type === 'NewExpression') return false;
  if (node.type !== 'CallExpression') return false;
  const callee = pathOf(node.callee);
  if (callee === 'performance.now' || callee === 'Date.now') return true;
  if (callee === 'process.hrtime.bigint' || (callee === 'process.hrtime' && node.arguments.length === 0)) return true;
  if (callee === 'process.cpuUsage' && node.arguments.length === 0) return true;
  const c = node.callee;
  return (
    c.type === 'MemberExpression' &&
    !c.computed &&
    c.property.type === 'Identifier' &&
    (c.property.name === 'getTime' || c.property.name === 'valueOf') &&
    c.object.type === 'NewExpression' &&
    pathOf(c.object.callee) === 'Date' &&
    c.object.arguments.length === 0
  );
}

/** A call that returns a measurement: `process.hrtime(start)`, `process.cpuUsage(start)`, `growthFactor(…)`. */
function isMeasurement(node) {
  if (node.type !== 'CallExpression') return false;
  const callee = pathOf(node.callee);
  if (callee === 'growthFactor' || callee?.endsWith('.growthFactor')) return true;
  return (callee === 'process.hrtime' || callee === 'process.cpuUsage') && node.arguments.length > 0;
}

const SKIP = new Set(['parent', 'loc', 'range', 'tokens', 'comments']);
const FUNCTION = new Set(['FunctionExpression', 'ArrowFunctionExpression', 'FunctionDeclaration']);

/** Calls `visit` on `node` and every node below it, except inside nested functions. */
function walk(node, visit) {
  if (node === null || typeof node !== 'object' || typeof node.type !== 'string') return;
  visit(node);
  for (const [key, value] of Object.entries(node)) {
    if (SKIP.has(key)) continue;
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child !== null && typeof child === 'object' && typeof child.type === 'string' && !FUNCTION.has(child.type)) {
        walk(child, visit);
      }
    }
  }
}

function some(node, test) {
  let found = false;
  walk(node, (n) => {
    if (!found && test(n)) found = true;
  });
  return found;
}

/** Is `expect(…)` / `expect.soft(…)` / `assert(…)` / `assert.x(…)` this call? */
function isAssertionCall(node) {
  const callee = pathOf(node.callee);
  return (
    callee === 'expect' ||
    callee === 'expect.soft' ||
    callee === 'assert' ||
    (callee !== undefined && /^assert\.\w+$/.test(callee))
  );
}

/** The `expect(…)` call a matcher chain starts from (`expect(x).not.toBe(y)` → `expect(x)`). */
function expectOf(node) {
  let n = node;
  while (n.type === 'MemberExpression' || n.type === 'CallExpression') {
    if (n.type === 'CallExpression' && isAssertionCall(n)) return n;
    n = n.type === 'MemberExpression' ? n.object : n.callee;
  }
  return undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'Tests never assert wall-clock durations or growth ratios of timings' },
    schema: [],
    messages: { duration: MESSAGE },
  },
  create(context) {
    const sourceCode = context.sourceCode;
    /** `[target path, value]` of every declaration and assignment in the file. */
    const bindings = [];
    const checks = [];

    return {
      VariableDeclarator(node) {
        const name = pathOf(node.id);
        if (name !== undefined && node.init) bindings.push([name, node.init]);
      },
      AssignmentExpression(node) {
        const name = pathOf(node.left);
        if (name !== undefined) bindings.push([name, node.right]);
      },
      CallExpression(node) {
        if (isAssertionCall(node)) checks.push(...node.arguments);
        // a matcher's arguments: expect(x).toBeLessThan(<here>)
        if (node.callee.type === 'MemberExpression' && expectOf(node.callee.object) !== undefined) {
          checks.push(...node.arguments);
        }
      },
      'Program:exit'() {
        const timestamps = new Set();
        const durations = new Set();
        const named = (set) => (n) => {
          const path = n.type === 'Identifier' || n.type === 'MemberExpression' ? pathOf(n) : undefined;
          return path !== undefined && set.has(path);
        };
        const isTimestamp = (n) => isClockReading(n) || named(timestamps)(n);
        const isDuration = (n) =>
          isMeasurement(n) ||
          named(durations)(n) ||
          (n.type === 'BinaryExpression' &&
            n.operator === '-' &&
            (some(n.left, isTimestamp) || some(n.right, isTimestamp)));
        // Follow assignments until nothing new is learnt (chains like t0 → start → elapsed).
        for (let changed = true; changed;) {
          changed = false;
          for (const [name, value] of bindings) {
            if (!durations.has(name) && some(value, isDuration)) {
              durations.add(name);
              changed = true;
            } else if (!timestamps.has(name) && !durations.has(name) && some(value, isClockReading)) {
              timestamps.add(name);
              changed = true;
            } else if (!timestamps.has(name) && !durations.has(name) && some(value, named(timestamps))) {
              timestamps.add(name);
              changed = true;
            }
          }
        }
        for (const argument of checks) {
          let found;
          walk(argument, (n) => {
            if (found === undefined && isDuration(n)) found = n;
          });
          if (found !== undefined) {
            context.report({
              node: argument,
              messageId: 'duration',
              data: { what: `\`${sourceCode.getText(found)}\`` },
            });
          }
        }
      },
    };
  },
};

export default rule;
