/**
 * The store as one request's planning sees it: the store plus the effect of the records
 * planned so far. Records are checked one after another against it, so conflicts inside
 * one request (the same username twice, a rename onto a name freed earlier) are found
 * before anything is applied.
 */

/** How the draft reads the store underneath: id ↔ unique key. */
export interface DraftBase<Id> {
  keyOf(id: Id): string | undefined;
  idOf(key: string): Id | undefined;
}

/** An overlay of planned creates, renames and deletes over the store's id ↔ key index. */
export class Draft<Id extends number | string> {
  /** key → id, or null when planned records freed the key. */
  private readonly keys = new Map<string, Id | null>();
  /** id → key, or null when a planned record deleted it. */
  private readonly ids = new Map<Id, string | null>();

  constructor(private readonly base: DraftBase<Id>) {}

  /** Id holding `key` once the planned records are applied. */
  idOf(key: string): Id | undefined {
    if (this.keys.has(key)) return this.keys.get(key) ?? undefined;
    return this.base.idOf(key);
  }

  /** Key of `id` once the planned records are applied; undefined when it does not exist. */
  keyOf(id: Id): string | undefined {
    if (this.ids.has(id)) return this.ids.get(id) ?? undefined;
    return this.base.keyOf(id);
  }

  has(id: Id): boolean {
    return this.keyOf(id) !== undefined;
  }

  /** Plans that `id` exists under `key` (create, or update with a possible rename). */
  put(id: Id, key: string): void {
    const old = this.keyOf(id);
    if (old !== undefined && old !== key) this.keys.set(old, null);
    this.keys.set(key, id);
    this.ids.set(id, key);
  }

  /** Plans that `id` is deleted. */
  remove(id: Id): void {
    const old = this.keyOf(id);
    if (old !== undefined) this.keys.set(old, null);
    this.ids.set(id, null);
  }
}
