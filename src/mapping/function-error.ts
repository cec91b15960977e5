/** A porter mapping function refused its arguments: the record fails with this message. */
export class MappingFunctionError extends Error {
  override readonly name = 'MappingFunctionError';
}
