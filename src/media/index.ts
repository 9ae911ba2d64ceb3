/**
 * Media bytes in the store (ARCHITECTURE, phase 3: `media/`): the chunk store,
 * its upkeep and its gauge, and incoming media (its rows, downloads, signed URLs
 * and serving). Nothing else reads media bytes.
 */
export { CHUNK_BYTES, ChunkWriter, MediaGoneError, deleteMedia, mediaSource } from './chunks.js';
export { installMediaMetrics } from './metrics.js';
export { KEEP_FREE_BYTES, MediaUpkeep } from './upkeep.js';
export { incomingMediaRepository, type IncomingMediaRow, type IncomingMediaStatus } from './incoming-repository.js';
export { MediaLinks } from './links.js';
export { pendingMediaRow } from './pending.js';
export { mediaOfMessages, shownMedia } from './shown.js';
export {
  copyForwardedMedia,
  findForwardableMedia,
  forwardableMedia,
  mediaNotForwardable,
  type ForwardableMedia,
} from './forwarding.js';
