/**
 * An incoming message's media on the messages page (DECISIONS 15): a preview of an image or sticker, a download
 * link for anything else, and the download's state in words while the file is not stored.
 *
 * Owns: choosing preview or link and naming each state. Must never: send the API token with the media request (the
 * signed `file_url` works without it, and an <img> or a link cannot carry it), or fetch anything but `file_url`.
 */
import type { Message, MessageMedia } from '../api';

const PREVIEWED = new Set(['image', 'sticker']);

const STATE: Record<Exclude<MessageMedia['status'], 'stored'>, string> = {
  pending: 'Media downloading…',
  too_large: 'Media too large: not downloaded',
  failed: 'Media download failed',
  expired: 'Media expired: no longer kept',
};

/**
 * The signed URL as the page may load it. The dashboard is served by the gateway it talks to, and its CSP allows
 * images from its own origin only: a `file_url` made with another public address (GATEWAY_PUBLIC_URL behind a proxy)
 * is loaded from this origin's `/media/…` with the same signature.
 */
export function sameOriginMediaUrl(fileUrl: string): string {
  const url = new URL(fileUrl, location.href);
  if (url.origin === location.origin) return url.href;
  const at = url.pathname.lastIndexOf('/media/');
  return at < 0 ? url.href : `${url.pathname.slice(at)}${url.search}`;
}

function sizeOf(bytes: number | null): string {
  if (bytes === null) return '';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function MessageMediaView({ message: m }: { message: Message }) {
  const media = m.media;
  if (media === undefined) return null;
  if (media.status !== 'stored' || m.file_url === null) {
    return <p class="media-state">{media.status === 'stored' ? 'Media not available' : STATE[media.status]}</p>;
  }
  const url = sameOriginMediaUrl(m.file_url);
  if (PREVIEWED.has(m.type)) {
    return (
      <a class="media-preview" href={url} target="_blank" rel="noopener noreferrer">
        <img src={url} alt={`${m.type === 'sticker' ? 'Sticker' : 'Image'} from ${m.sender ?? 'the sender'}`} />
      </a>
    );
  }
  return (
    <p class="media-link">
      <a href={url} download={media.file_name ?? ''} target="_blank" rel="noopener noreferrer">
        {media.file_name === null ? `Download ${m.type}` : `Download ${media.file_name}`}
      </a>{' '}
      <span class="muted">
        {media.mimetype}
        {media.size === null ? '' : `, ${sizeOf(media.size)}`}
      </span>
    </p>
  );
}
