/**
 * A short text for a rule, `condition = value`, for diagrams: strings unquoted when they are
 * plain words, other values as JSON (truncated), never throwing.
 * @internal
 */
export function ruleLabel(condition: string, value: unknown): string {
  return `${condition} = ${valueText(value)}`;
}

function valueText(value: unknown): string {
  if (typeof value === 'string') return /^[\w.-]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object' || value === null) return String(value);
  try {
    const json = JSON.stringify(value);
    return json.length > 40 ? `${json.slice(0, 37)}...` : json;
  } catch {
    return Array.isArray(value) ? '[...]' : '{...}';
  }
}
