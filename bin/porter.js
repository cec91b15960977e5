#!/usr/bin/env node
// Runs porter's TypeScript sources with no build step to remember: from their bundle
// (bin/bundle.js), made on first use, or through tsx when the bundle cannot be made.
import { bundled } from './bundle.js';

let entry;
try {
  entry = await bundled('src/cli/main.ts');
} catch {
  entry = undefined;
}
if (entry) {
  await import(entry);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
