/**
 * Media bytes in the store (ARCHITECTURE, phase 3: `media/`): the chunk store,
 * its upkeep and its gauge. Nothing else reads media bytes.
 */
export { CHUNK_BYTES, ChunkWriter, MediaGoneError, deleteMedia, mediaSource } from './chunks.js';
export { installMediaMetrics } from './metrics.js';
export { KEEP_FREE_BYTES, MediaUpkeep } from './upkeep.js';
