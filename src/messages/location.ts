// Owns the rules of a location message's params (DECISIONS 5): finite coordinates within their
// ranges, optional name and address. It must never do I/O (no geocoding) and never accept a
// coordinate sent as a string: JSON numbers are checked as sent, not coerced.
import type { NetworkMessageContent } from '../network/network.js';
import { LOCATION_TEXT_MAX } from './limits.js';
import { field, isRecord, readText, type Problems } from './problems.js';

type LocationContent = Extract<NetworkMessageContent, { type: 'location' }>;

export interface ParsedLocation {
  params: { location: { degreesLatitude: number; degreesLongitude: number; name?: string; address?: string } };
  content: LocationContent;
}

const code = 'VALIDATION_FAILED';

function readDegrees(problems: Problems, path: string, value: unknown, limit: number): number {
  if (value === undefined) problems.add(code, path, 'is required');
  else if (typeof value !== 'number' || !Number.isFinite(value)) problems.add(code, path, 'must be a number');
  else if (value < -limit || value > limit) problems.add(code, path, `must be between -${limit} and ${limit}`);
  else return value;
  return 0;
}

/** Reads location params, recording violations; the result is only meaningful when nothing was recorded. */
export function parseLocation(params: Record<string, unknown>, problems: Problems): ParsedLocation {
  const raw = field(params, 'location');
  if (raw !== undefined && !isRecord(raw)) {
    problems.add(code, 'params.location', 'must be an object');
    return {
      params: { location: { degreesLatitude: 0, degreesLongitude: 0 } },
      content: { type: 'location', latitude: 0, longitude: 0 },
    };
  }
  // A missing location reads as an empty one, so the answer names the coordinates it needs.
  const location = raw ?? {};
  const latitude = readDegrees(problems, 'params.location.degreesLatitude', field(location, 'degreesLatitude'), 90);
  const longitude = readDegrees(problems, 'params.location.degreesLongitude', field(location, 'degreesLongitude'), 180);
  const text = (key: 'name' | 'address') =>
    readText(problems, `params.location.${key}`, field(location, key), {
      max: LOCATION_TEXT_MAX,
      required: false,
      code,
    });
  const name = text('name');
  const address = text('address');
  const extras = { ...(name === undefined ? {} : { name }), ...(address === undefined ? {} : { address }) };
  return {
    params: { location: { degreesLatitude: latitude, degreesLongitude: longitude, ...extras } },
    content: { type: 'location', latitude, longitude, ...extras },
  };
}
