import type * as arrow from 'apache-arrow';

/**
 * A query's result as plain objects, read column by column. Row proxies (`toArray()`) cost ~2.5 µs
 * a field, ~5 ms for 100 rows of an entry — a quarter of a vector search at 100K entries.
 */
export async function plainRows<T>(q: { toArrow(): Promise<arrow.Table> }): Promise<T[]> {
  const table = await q.toArrow();
  const rows = Array.from({ length: table.numRows }, () => ({}) as Record<string, unknown>);
  for (const field of table.schema.fields) {
    const column = table.getChild(field.name)!;
    for (let i = 0; i < rows.length; i++) rows[i]![field.name] = column.get(i);
  }
  return rows as T[];
}
