/**
 * Lists of ids as SQLite statements take them: batches cut into power-of-two sizes and `in` lists padded to one, so
 * the statement texts (and SQLite's cache of prepared statements) stay few.
 *
 * Owns: the sizes. Must never: run a statement.
 */
/**
 * Batches are cut into power-of-two sizes (at most 256), and `in` lists padded
 * to one by repeating an id: SQLite keeps prepared statements by SQL text, and
 * a text per list length would churn that cache for every other query too.
 */
const MAX_CHUNK = 256;

export function pow2Chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length;) {
    let size = MAX_CHUNK;
    while (size > items.length - i) size /= 2;
    out.push(items.slice(i, i + size));
    i += size;
  }
  return out;
}

export function paddedLists<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += MAX_CHUNK) {
    const list = items.slice(i, i + MAX_CHUNK);
    let size = 1;
    while (size < list.length) size *= 2;
    while (list.length < size) list.push(list[0]!);
    out.push(list);
  }
  return out;
}
