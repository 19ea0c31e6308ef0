import { describe, expect, test } from 'bun:test';
import { storageLimitBody } from '../../src/contract/admin.ts';
import { groupPatchBody, teamFolderPatchBody } from '../../src/contract/groups.ts';

/** The message a body's one bad field gets, or null when the body is accepted. */
function refusal(schema: { safeParse(v: unknown): { success: boolean; error?: { issues: { message: string }[] } } }, body: unknown) {
  const r = schema.safeParse(body);
  return r.success ? null : r.error!.issues[0]!.message;
}

describe('byte counts in request bodies: each field names itself in every refusal', () => {
  const cases = [
    { field: 'teamFolderBytes', schema: groupPatchBody, typeError: 'teamFolderBytes must be a whole number of bytes, or null' },
    { field: 'quota', schema: teamFolderPatchBody, typeError: 'quota must be a whole number of bytes, or null for the instance default' },
    { field: 'storageLimit', schema: storageLimitBody, typeError: null, extra: { targetUserId: 'u1' } },
  ] as const;
  for (const c of cases) {
    test(c.field, () => {
      const body = (v: unknown) => ({ ...('extra' in c ? c.extra : {}), [c.field]: v });
      expect(refusal(c.schema, body(1024))).toBeNull();
      expect(refusal(c.schema, body(null))).toBeNull();
      expect(refusal(c.schema, body(1.5))).toBe(`${c.field} must be a whole number of bytes`);
      expect(refusal(c.schema, body(0))).toBe(`${c.field} must be positive`);
      expect(refusal(c.schema, body(-4096))).toBe(`${c.field} must be positive`);
      expect(refusal(c.schema, body(2 ** 53))).not.toBeNull();
      const notNumber = refusal(c.schema, body('10G'));
      if (c.typeError === null) expect(notNumber).not.toBeNull();
      else expect(notNumber).toBe(c.typeError);
    });
  }
});
