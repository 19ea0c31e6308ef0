import { eq } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { settings } from '../schema/users.ts';

/** The SQL of instance settings (`settings`): one JSON value per key. */
export class SettingsRepo {
  constructor(private readonly db: Db) {}

  all(): Array<{ key: string; value: string }> {
    return this.db.select({ key: settings.key, value: settings.value }).from(settings).all();
  }

  get(key: string): string | null {
    return this.db.select({ value: settings.value }).from(settings).where(eq(settings.key, key)).get()?.value ?? null;
  }

  set(key: string, value: string, at: number): void {
    this.db
      .insert(settings)
      .values({ key, value, updatedAt: at })
      .onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: at } })
      .run();
  }
}
