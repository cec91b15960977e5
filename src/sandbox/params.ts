/**
 * Request parameters: query string first, then form fields (the spec leaves open where
 * `pretty` travels on writes, so both places are read). The API key is read from the query
 * only (`fromQuery`), as the real product takes it.
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
    return this.fromQuery(name) ?? this.form?.get(name);
  }

  /** The parameter's text from the query string only (form fields are not looked at). */
  fromQuery(name: string): string | undefined {
    const value = this.query[name];
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
    return undefined;
  }

  /**
   * An integer filter; a value that is not one is a 400 naming the parameter. Given empty
   * (`?userId=`) is a 400 too: it is not "no filter", which would answer every record.
   */
  integer(name: string): number | undefined {
    const text = this.filterText(name);
    if (text === undefined) return undefined;
    if (!/^-?\d+$/.test(text.trim()))
      throw badRequest(`parameter ${name} must be an integer, got "${text}"`);
    return Number(text);
  }

  /** A string filter; absent is undefined, given empty is a 400 naming the parameter. */
  string(name: string): string | undefined {
    return this.filterText(name);
  }

  private filterText(name: string): string | undefined {
    const text = this.get(name);
    if (text === '') {
      throw badRequest(`parameter ${name} is empty: give a value, or leave it out for all records`);
    }
    return text;
  }

  /** `pretty`: "true" or "1" (any case) indents the answer; anything else does not. */
  get pretty(): boolean {
    const text = this.get('pretty')?.trim().toLowerCase();
    return text === 'true' || text === '1';
  }
}
