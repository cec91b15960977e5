/** Why one attempt of a delivery failed, and whether another attempt can help. */
export class DeliveryError extends Error {
  constructor(
    message: string,
    /** A redirect to another host, a host off the allow-list: retrying sends the same. */
    readonly permanent = false,
    /** The receiver's HTTP status, when it answered. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'DeliveryError';
  }
}
