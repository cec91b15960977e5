/** Anchors: a record recognised by the source's own id, kept in the DAM record (docs/mapping.md#anchors). */
export {
  anchorText,
  DEFAULT_ANCHOR_KEY,
  JOIN_RULES,
  type AnchorSettings,
  type JoinRule,
} from './anchor-settings.js';
export {
  anchorProblem,
  descriptionWithoutAnchor,
  readAnchor,
  writeAnchor,
} from './anchor-field.js';
export {
  AnchorIndex,
  findByAnchor,
  type AnchorCandidate,
  type AnchorMatch,
} from './anchor-index.js';
export { AnchorRows, type AnchorOutcome, type StagedAnchor } from './anchor-rows.js';
