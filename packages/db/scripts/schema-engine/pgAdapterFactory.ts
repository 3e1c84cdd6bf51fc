import { randomUUID } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  ColumnTypeEnum,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQuery,
  type SqlResultSet,
} from "@prisma/driver-adapter-utils";
import type pg from "pg";
import { createDatabase, dropDatabase, withDatabase } from "./database";

/**
 * The `@prisma/adapter-pg` 7.10.1 factory, made safe for the schema engine. Its own
 * migration support has traps that each cost a debugging session:
 *
 * - `connectToShadowDb` with a connection string silently points the "shadow" pool at the real
 *   database (pg lets the string's database win over the `database` field), and it drops the
 *   shadow database while still connected to it. We create and drop shadow databases ourselves.
 * - PostgreSQL's `"char"` type (oid 18, e.g. `pg_class.relkind`, `pg_constraint.contype`) is not
 *   mapped, so the engine's introspection fails with a misleading "access denied". We map it to
 *   the engine's Character type.
 * - `executeScript` splits the script on `;`, which breaks `$$` bodies and applies half a
 *   migration when a statement fails. We send the whole script as one simple query: PostgreSQL
 *   runs it as one implicit transaction, exactly like Prisma's native engine does.
 * - The engine holds a session-level advisory lock, so every pool has exactly one connection
 *   (a second connection could run the unlock, or deadlock against the lock).
 *
 * Every adapter handed out is tracked so `close()` can end all pools: the engine does not always
 * dispose them, and an open pool keeps the process (and the database) busy.
 */

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

/** The part of adapter-pg's internals we patch (pinned to 7.10.1, checked at run time). */
interface PatchableQueryable {
  performIO(query: SqlQuery): Promise<pg.QueryResult>;
  queryRaw(query: SqlQuery): Promise<SqlResultSet>;
  onError(error: unknown): never;
}

/**
 * adapter-pg throws on `"char"` columns; the engine reads them as single characters (PostgreSQL
 * 18 returns rows of them when it describes NOT NULL constraints). We let adapter-pg see text,
 * then tell the engine the column is a Character. The values are already one-letter strings.
 */
function reportCharAsCharacter(queryable: object): void {
  const target = queryable as PatchableQueryable;
  const performIO = target.performIO;
  const queryRaw = target.queryRaw;
  if (typeof performIO !== "function" || typeof queryRaw !== "function") {
    throw new Error("@prisma/adapter-pg internals changed (no performIO/queryRaw); re-check pgAdapterFactory.ts");
  }
  const charColumnsByQuery = new WeakMap<SqlQuery, number[]>();
  target.performIO = async function performIOCharAsText(query) {
    const result = await performIO.call(this, query);
    const charColumns: number[] = [];
    result.fields.forEach((field, index) => {
      if (field.dataTypeID !== PG_CHAR_OID) return;
      field.dataTypeID = PG_TEXT_OID;
      charColumns.push(index);
    });
    if (charColumns.length > 0) charColumnsByQuery.set(query, charColumns);
    return result;
  };
  target.queryRaw = async function queryRawWithCharacters(query) {
    const result = await queryRaw.call(this, query);
    for (const index of charColumnsByQuery.get(query) ?? []) result.columnTypes[index] = ColumnTypeEnum.Character;
    return result;
  };
}

function patchAdapter(adapter: SqlDriverAdapter, pool: pg.Pool): SqlDriverAdapter {
  reportCharAsCharacter(adapter);
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (isolationLevel) => {
    const transaction = await startTransaction(isolationLevel);
    reportCharAsCharacter(transaction);
    return transaction;
  };
  adapter.executeScript = async (script: string) => {
    try {
      await pool.query(script);
    } catch (error) {
      (adapter as unknown as PatchableQueryable).onError(error); // throws the adapter's own error type
    }
  };
  return adapter;
}

export class MigrationAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = "postgres" as const;
  readonly adapterName = "@prisma/adapter-pg";
  private readonly open = new Set<() => Promise<void>>();

  constructor(private readonly databaseUrl: string) {}

  private async connectTo(url: string, afterDispose?: () => Promise<void>): Promise<SqlDriverAdapter> {
    const adapter = await new PrismaPg({ connectionString: url, max: 1 }).connect();
    const pool = (adapter as unknown as { underlyingDriver(): pg.Pool }).underlyingDriver();
    patchAdapter(adapter, pool);
    let disposed = false;
    const dispose = adapter.dispose.bind(adapter);
    const disposeOnce = async () => {
      if (disposed) return;
      disposed = true;
      this.open.delete(disposeOnce);
      await dispose();
      await afterDispose?.();
    };
    adapter.dispose = disposeOnce;
    this.open.add(disposeOnce);
    return adapter;
  }

  connect(): Promise<SqlDriverAdapter> {
    return this.connectTo(this.databaseUrl);
  }

  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    const name = `troupe_shadow_${randomUUID().replaceAll("-", "")}`;
    await createDatabase(this.databaseUrl, name);
    // Drop only after our pool has ended; FORCE covers a connection the engine left open.
    return this.connectTo(withDatabase(this.databaseUrl, name), () => dropDatabase(this.databaseUrl, name));
  }

  /** Ends every pool this factory opened (and drops any shadow database still around). */
  async close(): Promise<void> {
    for (const dispose of [...this.open]) await dispose();
  }
}
