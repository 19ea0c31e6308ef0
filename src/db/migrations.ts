import journal from '../../migrations/meta/_journal.json' with { type: 'json' };
import m0000 from '../../migrations/0000_initial.sql' with { type: 'text' };

/** The SQL migrations, embedded into the executable. Add one line per file drizzle-kit generates. */
export const embeddedMigrations: ReadonlyArray<{ tag: string; sql: string }> = [{ tag: '0000_initial', sql: m0000 }];

export const journalTags: readonly string[] = journal.entries.map((e) => e.tag);
