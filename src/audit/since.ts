/** The `--since` of `porter audit` and `GET /v1/audit`. */
import { PorterError } from '../errors/porter-error.js';

/** `24h`, `7d`, `30m` back from now, or an ISO time. */
export function parseSince(text: string | undefined, now = Date.now()): Date | undefined {
  if (text === undefined || text === '') return undefined;
  const match = /^(\d{1,6})([dhm])$/.exec(text.trim());
  if (match) {
    const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[match[2] as 'd' | 'h' | 'm'];
    return new Date(now - Number(match[1]) * unit);
  }
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) {
    throw new PorterError(
      'PORTER_USAGE',
      `since: a duration such as 24h or 7d, or an ISO time, not "${text}"`,
    );
  }
  return date;
}
