/**
 * One value per owner object, made on first use and kept as long as the owner lives (a
 * WeakMap): a gatherer per admin client, a lock table per target's client.
 */
export class OnePer<K extends object, V> {
  private readonly made = new WeakMap<K, V>();

  /** The owner's value, made by `make` the first time it is asked for. */
  of(owner: K, make: () => V): V {
    let value = this.made.get(owner);
    if (value === undefined) {
      value = make();
      this.made.set(owner, value);
    }
    return value;
  }
}
