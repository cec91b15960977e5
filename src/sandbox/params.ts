/**
 * Request parameters: query string first, then form fields (the spec leaves open where
 * `pretty` travels on writes, so both places are read).
 */
import { badRequest } from './errors.js';

/** The parameters of one request, from its query and its form. */
export class RequestParams {
  constructor(
    private readonly query: Readonly<Record<string, unknown>>,
    readonly form: ReadonlyMap<string, string> | undefined,
  ) {}

  /** The parameter's text, or undefined when absent; the first value wins when repeated. */
  get(name: string): string | undefined {
    const value = this.query[name];
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
    return this.form?.get(name);
  }

  /** An integer parameter; a value that is not one is a 400 naming the parameter. */
  integer(name: string): number | undefined {
    const text = this.get(name);
    if (text === undefined || text === '') return undefined;
    if (!/^-?\d+$/.test(text.trim()))
      throw badRequest(`parameter ${name} must be an integer, got "${text}"`);
    return Number(text);
  }

  /** A string parameter; empty counts as absent. */
  string(name: string): string | undefined {
    const text = this.get(name);
    return text === undefined || text === '' ? undefined : text;
  }

  /** `pretty`: "true" or "1" (any case) indents the answer; anything else does not. */
  get pretty(): boolean {
    const text = this.get('pretty')?.trim().toLowerCase();
    return text === 'true' || text === '1';
  }
}
