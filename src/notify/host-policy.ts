/**
 * Where deliveries may go: PORTER_NOTIFY_ALLOWED_HOSTS lists hosts (`hooks.slack.com`) and
 * domains (`*.example.com`); unset, any host. A redirect is followed only to the same origin.
 */

/** Whether a host is on the allow-list (always, without one). */
export function hostAllowed(host: string, allowed: readonly string[] | undefined): boolean {
  if (allowed === undefined) return true;
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  return allowed.some((entry) => {
    const rule = entry.toLowerCase();
    return rule.startsWith('*.') ? name.endsWith(rule.slice(1)) : name === rule;
  });
}

/** Whether a redirect from `from` to `location` stays on the same origin (scheme, host, port). */
export function sameOrigin(from: string, location: string): boolean {
  try {
    return new URL(location, from).origin === new URL(from).origin;
  } catch {
    return false;
  }
}
