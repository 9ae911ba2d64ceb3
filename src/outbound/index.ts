// The outbound HTTP guard's public surface: address policy, the guarded dispatcher shared by media
// fetching and webhook delivery, media download and format sniffing. It must never add behaviour
// of its own; importers outside src/outbound/ go through this file, not the modules behind it.
export { isPublicAddress } from './address-policy.js';
export type { AddressPolicy } from './address-policy.js';
export {
  AllowListError,
  PRIVATE_DESTINATION_HINT,
  allowListPolicy,
  destinationPolicy,
  parseAllowedPrivateHosts,
} from './allow-list.js';
export type { DestinationSettings } from './allow-list.js';
export { canonicalHost, hostVerdict, isLoopbackName } from './host-name.js';
export type { HostVerdict } from './host-name.js';
export { destinationProblem } from './destination-check.js';
export type { DestinationCheckOptions } from './destination-check.js';
export {
  BlockedAddressError,
  createGuardedDispatcher,
  createGuardedLookup,
  findBlockedAddressError,
  outboundErrorCode,
} from './guarded-agent.js';
export type { GuardedDispatcherOptions } from './guarded-agent.js';
export { HEAD_BYTES, fetchMedia, MediaFetchError, streamMedia } from './fetch-media.js';
export type { FetchedMedia, FetchMediaOptions, MediaFetchFailure, MediaSink, StreamedMedia } from './fetch-media.js';
export { sniffDocumentType, sniffImageType, sniffMediaType } from './sniff.js';
export type { ImageType } from './sniff.js';
