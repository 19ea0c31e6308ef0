/** One row of the change log, as the dispatcher reads it. */
export interface ChangeRecord {
  seq: number;
  at: number;
  accountId: string;
  actorKind: 'login' | 'link' | 'docserver' | 'system';
  actorId: string | null;
  kind: string;
  itemId: string | null;
  itemType: string | null;
  nameBefore: string | null;
  parentBefore: string | null;
  nameAfter: string | null;
  parentAfter: string | null;
  details: unknown;
}

/** What the webhook dispatcher needs of the change log: keyset reads after a seq, and the newest seq. */
export interface ChangeFeed {
  after(seq: number, limit: number): ChangeRecord[];
  latestSeq(): number;
}
