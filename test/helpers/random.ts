/** A seeded pseudo-random source, so fault tests replay the same faults. */
export { seededRandom } from '../../src/sandbox/ids.js';
