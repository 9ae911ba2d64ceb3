/**
 * What the webhooks pages share: a webhook's filters in words, the API's messages for a form field, and the notice
 * a deleted webhook's page leaves for the list.
 */
import { ApiFailure, type Device } from '../api';

/** Which devices a webhook takes events of, in words. */
export function describeDevices(ids: number[] | null, devices: Device[]): string {
  if (ids === null) return 'All devices';
  if (ids.length === 0) return 'No device';
  return ids.map((id) => devices.find((d) => d.id === id)?.name ?? `device ${id}`).join(', ');
}

export function describeEvents(events: string[] | null): string {
  if (events === null || events.includes('*')) return 'All events';
  return events.join(', ');
}

/** The notice a webhook's page leaves for the list after deleting it (its page is gone). */
let deletedNotice: string | null = null;

export function leaveDeletedNotice(notice: string): void {
  deletedNotice = notice;
}

/** That notice, once. */
export function takeDeletedNotice(): string | null {
  const notice = deletedNotice;
  deletedNotice = null;
  return notice;
}

/** The API's messages for a field, from a failure (empty for anything else). */
export function fieldErrors(error: unknown, path: string): string[] {
  return error instanceof ApiFailure ? error.forField(path) : [];
}
