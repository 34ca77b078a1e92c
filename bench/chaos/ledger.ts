/**
 * The client's ledger: every acknowledged (2xx) write with the state it acknowledged, and the
 * writes whose outcome the client cannot know (no answer, or a 503: the connection may have
 * died after the commit reached the server). The checks compare the database with it.
 */
export type ItemKind = 'absence' | 'shift_change_request';
export type Decision = 'validated' | 'refused';

export interface LedgerItem {
  kind: ItemKind;
  id: number;
  /** The status last acknowledged (creation: pending, or refused/validated by a decision). */
  status: 'pending' | Decision;
  /** Decisions sent without a definite answer: the item may hold one of them. */
  uncertain: Set<Decision>;
  /** Documents acknowledged with the item (absence_documents ids). */
  documents: number[];
}

export class Ledger {
  readonly items = new Map<string, LedgerItem>();
  /** Writes by outcome. */
  acknowledged = 0;
  refused = 0;
  unanswered = 0;
  /** Uploads without a definite answer: their files may stay until the orphan sweep. */
  uncertainUploads = 0;

  private key(kind: ItemKind, id: number): string {
    return `${kind}:${id}`;
  }

  created(kind: ItemKind, id: number, documents: number[] = []): void {
    this.acknowledged += 1;
    this.items.set(this.key(kind, id), { kind, id, status: 'pending', uncertain: new Set(), documents });
  }

  decided(kind: ItemKind, id: number, decision: Decision): void {
    this.acknowledged += 1;
    const item = this.items.get(this.key(kind, id));
    if (item) item.status = decision;
  }

  decisionUncertain(kind: ItemKind, id: number, decision: Decision): void {
    this.items.get(this.key(kind, id))?.uncertain.add(decision);
  }

  of(kind: ItemKind): LedgerItem[] {
    return [...this.items.values()].filter((item) => item.kind === kind);
  }
}
