/**
 * undici, loaded on the first request: a command that never calls the admin server (an import
 * being received, a status) does not pay for loading it.
 */
import type * as Undici from 'undici';

type UndiciModule = typeof Undici;

let loading: Promise<UndiciModule> | undefined;
let loaded: UndiciModule | undefined;

/** undici, loaded once. */
export function loadUndici(): Promise<UndiciModule> {
  // undici is CommonJS: Node's import names its exports, a bundle's gives them as `default`
  loading ??= import('undici').then((module) => {
    const named = module as Partial<UndiciModule>;
    loaded = named.Pool !== undefined ? module : (module.default as unknown as UndiciModule);
    return loaded;
  });
  return loading;
}

/** undici's error classes once it is loaded; before that, no error can be one of them. */
export function undiciErrorsIfLoaded(): UndiciModule['errors'] | undefined {
  return loaded?.errors;
}
