/**
 * The span of one request to an admin server: its method, URL (without query, where `params`
 * sign-ins carry credentials), answer status, outcome and the records it carried.
 */
import { WORK_ATTRIBUTES, type SpanOptions } from '../observability/tracing.js';

export const CALL_SPAN = {
  method: 'http.request.method',
  url: 'url.full',
  status: 'http.response.status_code',
  resource: 'porter.resource',
  /** Records a write sent, or a read answered. */
  records: 'porter.records',
  /** How the call ended, as the metrics say it (AdminCallOutcome). */
  outcome: 'porter.call.outcome',
} as const;

export function callSpanAttributes(call: {
  method: string;
  resource: string;
  url: string;
  target?: string;
  records?: number;
}): SpanOptions {
  return {
    kind: 'client',
    attributes: {
      [CALL_SPAN.method]: call.method,
      [CALL_SPAN.url]: call.url,
      [CALL_SPAN.resource]: call.resource,
      ...(call.records !== undefined ? { [CALL_SPAN.records]: call.records } : {}),
      ...(call.target !== undefined ? { [WORK_ATTRIBUTES.target]: call.target } : {}),
    },
  };
}
