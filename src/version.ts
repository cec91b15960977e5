import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** porter's version, from package.json. */
export const PORTER_VERSION: string = (require('../package.json') as { version: string }).version;
