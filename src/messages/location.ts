// Owns what a valid location message becomes (its rules are in src/messages/schemas.ts): the
// coordinates as sent, name and address when given and not empty. It must never do I/O (no
// geocoding).
import type { NetworkMessageContent } from '../network/network.js';

type LocationContent = Extract<NetworkMessageContent, { type: 'location' }>;

export interface BuiltLocation {
  params: { location: { degreesLatitude: number; degreesLongitude: number; name?: string; address?: string } };
  content: LocationContent;
}

export function buildLocation(params: Record<string, unknown>): BuiltLocation {
  const location = params.location as Record<string, unknown>;
  const latitude = location.degreesLatitude as number;
  const longitude = location.degreesLongitude as number;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const name = text(location.name);
  const address = text(location.address);
  const extras = { ...(name === undefined ? {} : { name }), ...(address === undefined ? {} : { address }) };
  return {
    params: { location: { degreesLatitude: latitude, degreesLongitude: longitude, ...extras } },
    content: { type: 'location', latitude, longitude, ...extras },
  };
}
