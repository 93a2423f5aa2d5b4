/** `record[key] = value`, keeping a `__proto__` key as data (an own property, the prototype untouched). */
export function setData(record: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}
