import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import { dialectOf, type DialectName } from './dialect.ts';
import type { Database } from './schema.ts';

/** What a prepared query's arguments may be: plain values bound as parameters. */
export type PreparedValue = string | number | null;

/** Stands for one named argument while the query is compiled. */
class Slot {
  constructor(readonly name: string) {}
}

/**
 * A query built and compiled once per dialect, then run with fresh values. kysely builds an
 * operation tree and compiles it to SQL on every call, which on the request path (API-key lookup,
 * rate-limit count, job read) took more CPU than SQLite took to run the statements (measured with
 * bench:api). `build` is called once, with placeholders: it must use each argument as a bound
 * value only (a comparison, an inserted or updated value), never to choose the query's shape (no
 * `if` on it, no IN list); an argument the compiled query does not carry as a parameter is refused
 * at that first call. The same function serves the database and its transactions.
 */
export function prepared<A extends Record<string, PreparedValue>, O>(
  build: (db: Kysely<Database>, args: A) => Compilable<O>,
): (db: Kysely<Database>, args: A) => Promise<O[]> {
  const compiled = new Map<DialectName, { query: CompiledQuery<O>; parameters: readonly unknown[] }>();
  return async (db, args) => {
    const dialect = dialectOf(db);
    let c = compiled.get(dialect);
    if (!c) {
      const names = Object.keys(args);
      const query = build(db, Object.fromEntries(names.map((name) => [name, new Slot(name)])) as unknown as A).compile();
      const bound = new Set(query.parameters.filter((p): p is Slot => p instanceof Slot).map((p) => p.name));
      const unbound = names.filter((name) => !bound.has(name));
      if (unbound.length > 0) throw new Error(`prepared query: argument(s) ${unbound.join(', ')} are not bound parameters of ${query.sql}`);
      c = { query, parameters: query.parameters };
      compiled.set(dialect, c);
    }
    const parameters = c.parameters.map((p) => (p instanceof Slot ? args[p.name] : p));
    return (await db.executeQuery<O>({ ...c.query, parameters })).rows;
  };
}
