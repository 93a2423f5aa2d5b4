import type { ConfigProblem } from '@signalyard/core';
import type { Style } from './cli-io.js';

const oneLine = (text: string): string => text.replace(/\s*[\r\n]+\s*/g, ' ');

/**
 * One problem as one line, `file:line: path: message` (`file: path: message` when the parser
 * gave no line; the root path shows as `(root)`).
 */
export function formatProblem(file: string, problem: ConfigProblem, style: Style): string {
  const where = problem.line === undefined ? file : `${file}:${problem.line}`;
  const path = problem.path === '' ? '(root)' : problem.path;
  return `${style.bold(where)}: ${style.cyan(path)}: ${oneLine(problem.message)}`;
}

/** One warning as one line, `file:line: path: warning: message` (the problem format with `warning:` before the message). */
export function formatWarning(file: string, problem: ConfigProblem, style: Style): string {
  const where = problem.line === undefined ? file : `${file}:${problem.line}`;
  return `${style.bold(where)}: ${style.cyan(problem.path)}: ${style.yellow('warning:')} ${oneLine(problem.message)}`;
}
