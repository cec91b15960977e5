/**
 * Work that runs one at a time per key: a call for a key starts when the calls for that key made
 * before it have settled (whatever their outcome); calls for other keys run alongside. A key is
 * forgotten once nothing for it is waiting.
 */
export class KeyedSerial<K> {
  private readonly tails = new Map<K, Promise<void>>();

  run<T>(key: K, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const result = before.then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with work running or waiting. */
  get size(): number {
    return this.tails.size;
  }
}
