import { setData } from '@signalyard/core/internal';

/** A plain-object copy of `record` (own enumerable keys) that keeps a `__proto__` key as data. @internal */
export function copyRecord<V>(record: Readonly<Record<string, V>>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const key of Object.keys(record)) setData(out, key, record[key]);
  return out;
}
