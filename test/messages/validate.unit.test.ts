// The validation of a `POST /messages` body (spec 2.3-2.5, 4.5, 7, 8; docs/internals.md, Answers and errors; Sending): every
// rule at its boundary, the exact ValidatedMessage of each type, the order in which problems are
// reported, and a property that no input makes it throw anything but a well-formed 400 ApiError.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError, errorBody, type ErrorCode } from '../../src/errors.js';
import {
  countCharacters,
  LIST_LIMITS,
  MAX_REPORTED_PATHS,
  MEDIA_LIMITS,
  MESSAGE_TYPES,
  validateListParams,
  validateSendRequest,
  type ValidatedMessage,
} from '../../src/messages/validate.js';

const DEVICE = '6281234567890';
const RECEIVER = '6289876543210';
const MiB = 1024 * 1024;
const WITH_RECEIVER = { requireReceiver: true };
const GROUP = { requireReceiver: false };

/** A body of `type` with valid addresses. */
function body(type: unknown, params?: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { device: DEVICE, receiver: RECEIVER, type, ...(params === undefined ? {} : { params }), ...extra };
}

function validate(value: unknown, options = WITH_RECEIVER): ValidatedMessage {
  return validateSendRequest(value, options);
}

function refusal(value: unknown, options = WITH_RECEIVER): ApiError {
  try {
    validateSendRequest(value, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error(`accepted ${JSON.stringify(value).slice(0, 200)}`);
}

/** Asserts the refusal's code and, when given, its exact `errors`. */
function expectRefused(value: unknown, code: ErrorCode, errors?: Record<string, string[]>, options = WITH_RECEIVER) {
  const error = refusal(value, options);
  expect({ code: error.code, status: error.statusCode }).toEqual({ code, status: 400 });
  if (errors !== undefined) expect(error.detail.errors).toEqual(errors);
  return error;
}

/** Asserts the refusal's code and that `errors` names `path` (other paths may be named too). */
function expectPath(value: unknown, code: ErrorCode, path: string, options = WITH_RECEIVER): string[] {
  const error = expectRefused(value, code, undefined, options);
  expect(Object.keys(error.detail.errors ?? {})).toContain(path);
  return error.detail.errors?.[path] ?? [];
}

const THUMBS = '👍🏽'; // 4 UTF-16 units, 2 code points, 1 character
const FAMILY = '👨‍👩‍👧'; // 8 UTF-16 units, 5 code points, 1 character
const ascii = (n: number) => 'a'.repeat(n);
const emoji = (n: number) => THUMBS.repeat(n);

describe('countCharacters', () => {
  it.each([
    ['', 0],
    ['hello', 5],
    [THUMBS, 1],
    [FAMILY, 1],
    ['🇮🇩', 1], // a flag is two regional indicators
    ['e\u0301', 1], // e + combining acute accent
    ['👍', 1],
    ['\r\n', 1], // one line break
    ['*bold* _it_', 11],
    [`a${FAMILY}b${THUMBS}`, 4],
    ['\ud800', 1], // a lone surrogate is still one (broken) character
  ])('counts %j as %i', (text, count) => {
    expect(countCharacters(text)).toBe(count);
  });

  it('never counts more than .length', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (text) => {
        expect(countCharacters(text)).toBeLessThanOrEqual(text.length);
      }),
    );
  });

  it('counts a string of n whole graphemes as n', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', THUMBS, FAMILY, '🇮🇩', 'é', '字'), { maxLength: 50 }), (parts) => {
        expect(countCharacters(parts.join(''))).toBe(parts.length);
      }),
    );
  });
});

describe('the body', () => {
  it.each([[null], [undefined], ['text'], [42], [true], [[]], [[body('chat', { text: 'hi' })]]])(
    'refuses %j: not an object',
    (value) => {
      expectRefused(value, 'VALIDATION_FAILED', { body: ['must be an object'] });
    },
  );
});

describe('type', () => {
  it('defaults to chat when missing or null (docs/internals.md, Whatspie compatibility)', () => {
    expect(validate({ device: DEVICE, receiver: RECEIVER, params: { text: 'hi' } })).toMatchObject({
      type: 'chat',
      message: 'hi',
    });
    expect(validate(body(null, { text: 'hi' })).type).toBe('chat');
  });

  it.each([
    ['Sticker'],
    ['reaction'],
    ['CHAT'],
    ['Chat'],
    [' chat'],
    [''],
    [5],
    [true],
    [['chat']],
    [{ type: 'chat' }],
    ['button'],
  ])('refuses %j as an invalid message type, listing the valid ones', (type) => {
    const error = expectRefused(body(type, { text: 'hi' }), 'INVALID_MESSAGE_TYPE');
    expect(error.message).toBe('Invalid message type');
    expect(error.detail.error).toBe(
      'type must be one of: chat, image, list, file, video, audio, location, template, sticker, contact, poll',
    );
  });

  it('accepts exactly the eleven types', () => {
    expect([...MESSAGE_TYPES]).toEqual([
      'chat',
      'image',
      'list',
      'file',
      'video',
      'audio',
      'location',
      'template',
      'sticker',
      'contact',
      'poll',
    ]);
  });
});

describe('device and receiver', () => {
  const PHONE_RULE =
    'must be a phone number in international format: digits only, country code first, no +, no leading 0, 7 to 15 digits';
  // A receiver may also be a group (docs/internals.md, Whatspie compatibility).
  const RECEIVER_RULE = `${PHONE_RULE}; or a group’s network id ending in @g.us`;

  it.each([
    ['with +', '+6281234567890'],
    ['with 00', '006281234567890'],
    ['with a leading 0 (national format)', '081234567890'],
    ['with a space', '62 81234567890'],
    ['with hyphens', '62-812-3456-7890'],
    ['with brackets', '(62)81234567890'],
    ['of 6 digits', '123456'],
    ['of 16 digits', '1234567890123456'],
    ['empty', ''],
    ['with a letter', '62812345678a'],
    ['with a trailing newline', '6281234567890\n'],
    ['with full-width digits', '６２８１２３４５６７'],
    ['a number', 6281234567890],
    ['an array', ['6281234567890']],
    ['an object', { phone: '6281234567890' }],
    ['a boolean', true],
  ])('refuses a receiver %s', (_label, receiver) => {
    expectRefused(body('chat', { text: 'hi' }, { receiver }), 'INVALID_PHONE', { receiver: [RECEIVER_RULE] });
  });

  it.each([
    ['with +', '+6281234567890'],
    ['with 00', '006281234567890'],
    ['with a leading 0', '081234567890'],
    ['with a space', '62 81234567890'],
    ['with a hyphen', '62-81234567890'],
    ['of 6 digits', '123456'],
    ['of 16 digits', '1234567890123456'],
    ['a number', 6281234567890],
  ])('refuses a device %s', (_label, device) => {
    expectRefused(body('chat', { text: 'hi' }, { device }), 'INVALID_PHONE', { device: [PHONE_RULE] });
  });

  it.each([['1234567'], ['123456789012345'], ['6281234567890'], ['14155550123']])('accepts %s', (phone) => {
    const result = validate(body('chat', { text: 'hi' }, { device: phone, receiver: phone }));
    expect(result.device).toBe(phone);
    expect(result.receiver).toBe(phone);
  });

  it('names both when both are malformed', () => {
    expectRefused(body('chat', { text: 'hi' }, { device: '+62', receiver: '0812' }), 'INVALID_PHONE', {
      device: [PHONE_RULE],
      receiver: [RECEIVER_RULE],
    });
  });

  it('names both when both are missing (null counts as missing)', () => {
    expectRefused({ type: 'chat', params: { text: 'hi' } }, 'VALIDATION_FAILED', {
      device: ['is required'],
      receiver: ['is required'],
    });
    expectRefused(body('chat', { text: 'hi' }, { device: null, receiver: null }), 'VALIDATION_FAILED', {
      device: ['is required'],
      receiver: ['is required'],
    });
  });

  it('answers Validation failed for a missing field, naming the malformed one too (issue 10 item 16)', () => {
    expectRefused({ type: 'chat', receiver: '+62', params: { text: 'hi' } }, 'VALIDATION_FAILED', {
      device: ['is required'],
      receiver: [RECEIVER_RULE],
    });
  });

  describe('for group sends (requireReceiver false)', () => {
    it('answers a null receiver', () => {
      const { device: _d, receiver: _r, ...rest } = body('chat', { text: 'hi' });
      expect(validate({ ...rest, device: DEVICE }, GROUP)).toMatchObject({ device: DEVICE, receiver: null });
    });

    it('ignores a given receiver, even a malformed one', () => {
      expect(validate(body('chat', { text: 'hi' }), GROUP).receiver).toBeNull();
      expect(validate(body('chat', { text: 'hi' }, { receiver: '+62 812' }), GROUP).receiver).toBeNull();
      expect(validate(body('chat', { text: 'hi' }, { receiver: 42 }), GROUP).receiver).toBeNull();
    });

    it('still requires and checks the device', () => {
      expectRefused({ type: 'chat', params: { text: 'hi' } }, 'VALIDATION_FAILED', { device: ['is required'] }, GROUP);
      expectRefused(body('chat', { text: 'hi' }, { device: '0812345678' }), 'INVALID_PHONE', undefined, GROUP);
    });
  });
});

describe('simulate_typing', () => {
  it.each([
    [undefined, 0],
    [null, 0],
    [0, 0],
    [1, 1],
    [false, 0],
    [true, 1],
  ])('maps %j to %i', (value, expected) => {
    const extra = value === undefined ? {} : { simulate_typing: value };
    expect(validate(body('chat', { text: 'hi' }, extra)).simulateTyping).toBe(expected);
  });

  it.each([[2], [-1], [0.5], ['1'], ['true'], ['yes'], [[1]], [{}]])('refuses %j', (value) => {
    expectRefused(body('chat', { text: 'hi' }, { simulate_typing: value }), 'VALIDATION_FAILED', {
      simulate_typing: ['must be 0 or 1'],
    });
  });
});

// Issue 10 item 16: every failing field at once where the answer is `Validation failed`; the
// specific messages (docs/internals.md, Answers and errors) answer only when nothing is missing or of the wrong type.
describe('every failing field at once', () => {
  const PHONE_RULE =
    'must be a phone number in international format: digits only, country code first, no +, no leading 0, 7 to 15 digits';
  // A receiver may also be a group (docs/internals.md, Whatspie compatibility).
  const RECEIVER_RULE = `${PHONE_RULE}; or a group’s network id ending in @g.us`;

  it('answers an unknown type at once: it decides what the params must be', () => {
    const error = expectRefused({ type: 'fax', device: '+1' }, 'INVALID_MESSAGE_TYPE');
    expect(error.detail.errors).toBeUndefined();
    expectRefused({ device: '+62', receiver: 'abc', type: 'foo' }, 'INVALID_MESSAGE_TYPE');
  });

  it('names the addresses and the params of an empty body (its type defaults to chat)', () => {
    expectRefused({}, 'VALIDATION_FAILED', {
      device: ['is required'],
      receiver: ['is required'],
      params: ['is required'],
    });
    expectRefused({ device: '+1' }, 'VALIDATION_FAILED', {
      device: [PHONE_RULE],
      receiver: ['is required'],
      params: ['is required'],
    });
    expectRefused({ type: 'chat' }, 'VALIDATION_FAILED', {
      device: ['is required'],
      receiver: ['is required'],
      params: ['is required'],
    });
  });

  it('names a malformed address beside a structural problem', () => {
    expectRefused(body('chat', { text: 'hi' }, { receiver: '+1', simulate_typing: 9 }), 'VALIDATION_FAILED', {
      receiver: [RECEIVER_RULE],
      simulate_typing: ['must be 0 or 1'],
    });
  });

  it('names the params’ problems beside the other fields’, with their full paths', () => {
    expectRefused(body('chat', { text: ascii(5000) }, { simulate_typing: 9 }), 'VALIDATION_FAILED', {
      simulate_typing: ['must be 0 or 1'],
      'params.text': ['must be at most 4096 characters'],
    });
    expectRefused(body('list', { sections: [] }, { simulate_typing: 'x' }), 'VALIDATION_FAILED', {
      simulate_typing: ['must be 0 or 1'],
      'params.title': ['is required'],
      'params.text': ['is required'],
      'params.buttonText': ['is required'],
      'params.sections': ['must have at least 1 section'],
    });
  });

  it('answers the specific message, naming its fields only, when nothing is missing or of the wrong type', () => {
    expectRefused(
      body('image', { image: { url: 'ftp://x' }, caption: ascii(4097) }, { receiver: '+1' }),
      'INVALID_PHONE',
      {
        receiver: [RECEIVER_RULE],
      },
    );
  });
});

describe('params', () => {
  it.each(['image', 'list', 'file', 'video', 'audio', 'location', 'template', 'chat'])(
    'are required for %s (without a top-level message)',
    (type) => {
      expectRefused(body(type), 'VALIDATION_FAILED', { params: ['is required'] });
      expectRefused(body(type, null), 'VALIDATION_FAILED', { params: ['is required'] });
    },
  );

  it.each([['text'], [42], [true], [[]], [[{ text: 'hi' }]]])('must be an object, not %j', (params) => {
    expectRefused(body('image', params), 'VALIDATION_FAILED', { params: ['must be an object'] });
    expectRefused(body('chat', params, { message: 'hi' }), 'VALIDATION_FAILED', { params: ['must be an object'] });
  });
});

describe('chat', () => {
  it('answers the exact validated message', () => {
    expect(validate(body('chat', { text: 'Hello *world*\nsecond line' }, { simulate_typing: 1 }))).toEqual({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'chat',
      simulateTyping: 1,
      message: 'Hello *world*\nsecond line',
      params: { text: 'Hello *world*\nsecond line' },
      media: null,
      content: { type: 'chat', text: 'Hello *world*\nsecond line' },
    });
  });

  it('accepts the text in a top-level message field (docs/internals.md, Sending)', () => {
    expect(validate(body('chat', undefined, { message: 'from message' }))).toEqual({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'chat',
      simulateTyping: 0,
      message: 'from message',
      params: { text: 'from message' },
      media: null,
      content: { type: 'chat', text: 'from message' },
    });
    expect(validate(body('chat', {}, { message: 'from message' })).params).toEqual({ text: 'from message' });
    expect(validate(body('chat', { text: null }, { message: 'from message' })).params).toEqual({
      text: 'from message',
    });
  });

  it('prefers params.text when both are given', () => {
    const result = validate(body('chat', { text: 'from params' }, { message: 'from message' }));
    expect(result.message).toBe('from params');
    expect(result.params).toEqual({ text: 'from params' });
    // params.text present but wrong is not rescued by message.
    expectRefused(body('chat', { text: '' }, { message: 'fine' }), 'VALIDATION_FAILED', {
      'params.text': ['must not be empty'],
    });
  });

  it('keeps only the text in params', () => {
    expect(validate(body('chat', { text: 'hi', caption: 'x', image: { url: 'https://x.test' } })).params).toEqual({
      text: 'hi',
    });
  });

  it.each([
    [{}, { 'params.text': ['is required'] }],
    [{ text: '' }, { 'params.text': ['must not be empty'] }],
    [{ text: ' \n\t ' }, { 'params.text': ['must not be blank'] }],
    [{ text: 42 }, { 'params.text': ['must be a string'] }],
    [{ text: ['hi'] }, { 'params.text': ['must be a string'] }],
  ])('refuses params %j', (params, errors) => {
    expectRefused(body('chat', params), 'VALIDATION_FAILED', errors);
  });

  it('names `message` when the refused text came from it', () => {
    expectRefused(body('chat', undefined, { message: '' }), 'VALIDATION_FAILED', { message: ['must not be empty'] });
    expectRefused(body('chat', undefined, { message: 7 }), 'VALIDATION_FAILED', { message: ['must be a string'] });
    expectRefused(body('chat', undefined, { message: ascii(4097) }), 'MESSAGE_TOO_LONG', {
      message: ['must be at most 4096 characters'],
    });
  });

  it('accepts 4096 characters and refuses 4097', () => {
    expect(validate(body('chat', { text: ascii(4096) })).message).toHaveLength(4096);
    const error = expectRefused(body('chat', { text: ascii(4097) }), 'MESSAGE_TOO_LONG', {
      'params.text': ['must be at most 4096 characters'],
    });
    expect(error.message).toBe('Message too long');
  });

  it('counts user-perceived characters, not UTF-16 units', () => {
    const text = emoji(4096);
    expect(text.length).toBe(4 * 4096);
    expect(validate(body('chat', { text })).message).toBe(text);
    expect(validate(body('chat', { text: ascii(4095) + FAMILY })).params).toEqual({ text: ascii(4095) + FAMILY });
    expectRefused(body('chat', { text: emoji(4097) }), 'MESSAGE_TOO_LONG');
    expectRefused(body('chat', { text: ascii(4096) + FAMILY }), 'MESSAGE_TOO_LONG');
    expectRefused(body('chat', undefined, { message: FAMILY.repeat(4097) }), 'MESSAGE_TOO_LONG');
  });
});

describe('image', () => {
  const URL_OK = 'https://cdn.example.com/pictures/cat.png?size=large';

  it('answers the exact validated message without optional fields', () => {
    expect(validate(body('image', { image: { url: URL_OK } }))).toEqual({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'image',
      simulateTyping: 0,
      message: null,
      params: { image: { url: URL_OK } },
      media: {
        kind: 'image',
        url: URL_OK,
        maxBytes: 16 * MiB,
        mimetype: null,
        fileName: null,
        caption: null,
        viewOnce: false,
      },
      content: null,
    });
  });

  it('answers the exact validated message with caption and viewOnce, dropping unknown fields', () => {
    const params = {
      image: { url: URL_OK, width: 10 },
      caption: '*Look*',
      viewOnce: true,
      mimetype: 'image/png',
      extra: 1,
    };
    expect(validate(body('image', params, { message: 'ignored' }))).toEqual({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'image',
      simulateTyping: 0,
      message: '*Look*',
      params: { image: { url: URL_OK }, caption: '*Look*', viewOnce: true },
      media: {
        kind: 'image',
        url: URL_OK,
        maxBytes: MEDIA_LIMITS.image,
        mimetype: null,
        fileName: null,
        caption: '*Look*',
        viewOnce: true,
      },
      content: null,
    });
  });

  it('echoes viewOnce false when it was given', () => {
    expect(validate(body('image', { image: { url: URL_OK }, viewOnce: false })).params).toEqual({
      image: { url: URL_OK },
      viewOnce: false,
    });
  });

  it('treats an empty or null caption as no caption', () => {
    for (const caption of ['', null]) {
      const result = validate(body('image', { image: { url: URL_OK }, caption }));
      expect(result.message).toBeNull();
      expect(result.params).toEqual({ image: { url: URL_OK } });
      expect(result.media?.caption).toBeNull();
    }
  });

  it.each([
    [{}, { 'params.image.url': ['is required'] }],
    [{ image: {} }, { 'params.image.url': ['is required'] }],
    [{ image: { url: null } }, { 'params.image.url': ['is required'] }],
    [{ image: { url: 42 } }, { 'params.image.url': ['must be a string'] }],
    [{ image: URL_OK }, { 'params.image': ['must be an object with a url'] }],
    [{ image: [URL_OK] }, { 'params.image': ['must be an object with a url'] }],
    [{ image: { url: URL_OK }, caption: 5 }, { 'params.caption': ['must be a string'] }],
    [{ image: { url: URL_OK }, viewOnce: 'yes' }, { 'params.viewOnce': ['must be a boolean'] }],
    [{ image: { url: URL_OK }, viewOnce: 1 }, { 'params.viewOnce': ['must be a boolean'] }],
  ])('refuses params %j as a validation failure', (params, errors) => {
    expectRefused(body('image', params), 'VALIDATION_FAILED', errors);
  });

  it.each([
    ['a relative URL', '/cat.png'],
    ['no scheme', 'cdn.example.com/cat.png'],
    ['ftp', 'ftp://example.com/cat.png'],
    ['a data URL', 'data:image/png;base64,iVBORw0KGgo='],
    ['file', 'file:///etc/passwd'],
    ['javascript', 'javascript:alert(1)'],
    ['no host', 'http://'],
    ['http: without slashes', 'http:example.com/cat.png'],
    ['three slashes', 'http:///example.com/cat.png'],
    ['credentials', 'https://user:secret@example.com/cat.png'],
    ['a user name', 'https://user@example.com/cat.png'],
    ['an empty user name', 'https://@example.com/cat.png'],
    ['a space', 'https://example.com/my cat.png'],
    ['leading space', ' https://example.com/cat.png'],
    ['a tab', 'https://exa\tmple.com/cat.png'],
    ['a newline', 'https://example.com/cat.png\n'],
    ['a NUL', 'https://example.com/\u0000.png'],
    ['a backslash', 'https://example.com\\@evil.test/cat.png'],
    ['an unparsable host', 'https://exa mple/'],
    ['a bad port', 'https://example.com:99999/cat.png'],
    ['empty', ''],
    ['2049 characters', `https://example.com/${ascii(2049 - 'https://example.com/'.length)}`],
  ])('refuses %s as an invalid image URL', (_label, url) => {
    const error = expectPath(body('image', { image: { url } }), 'INVALID_IMAGE_URL', 'params.image.url');
    expect(error).toHaveLength(1);
    expect(refusal(body('image', { image: { url } })).message).toBe('Invalid image URL');
  });

  it.each([
    ['http', 'http://example.com/cat.png'],
    ['upper-case scheme', 'HTTPS://EXAMPLE.COM/cat.png'],
    ['a port, query and fragment', 'https://example.com:8443/a/b.png?x=1&y=2#top'],
    ['an IPv4 literal (the address policy is applied when fetching)', 'http://93.184.216.34/cat.png'],
    ['an IPv6 literal', 'http://[2606:2800:220:1::]/cat.png'],
    ['an internationalised host', 'https://bücher.example/cat.png'],
    ['percent-encoding', 'https://example.com/my%20cat.png'],
    ['exactly 2048 characters', `https://example.com/${ascii(2048 - 'https://example.com/'.length)}`],
  ])('accepts a URL with %s, as sent', (_label, url) => {
    expect(url.length).toBeLessThanOrEqual(2048);
    const result = validate(body('image', { image: { url } }));
    expect(result.media?.url).toBe(url);
    expect(result.params).toEqual({ image: { url } });
  });

  it('limits the caption to 4096 characters', () => {
    expect(validate(body('image', { image: { url: URL_OK }, caption: emoji(4096) })).message).toBe(emoji(4096));
    expectRefused(body('image', { image: { url: URL_OK }, caption: ascii(4097) }), 'MESSAGE_TOO_LONG', {
      'params.caption': ['must be at most 4096 characters'],
    });
  });

  it('reports structural problems first (with every other failing field), then the URL, then the length', () => {
    expectRefused(body('image', { caption: ascii(4097), viewOnce: 'x' }), 'VALIDATION_FAILED', {
      'params.image.url': ['is required'],
      'params.caption': ['must be at most 4096 characters'],
      'params.viewOnce': ['must be a boolean'],
    });
    expectRefused(body('image', { image: { url: 'ftp://x' }, caption: ascii(4097) }), 'INVALID_IMAGE_URL', {
      'params.image.url': ['must be an absolute http or https URL'],
    });
  });
});

describe('video, audio and file', () => {
  const URL_OK = 'https://media.example.com/clip';

  it('answers the exact validated video', () => {
    const params = { video: { url: URL_OK }, mimetype: 'video/mp4', caption: 'clip', viewOnce: true, gifPlayback: 1 };
    expect(validate(body('video', params))).toEqual({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'video',
      simulateTyping: 0,
      message: 'clip',
      params: { video: { url: URL_OK }, mimetype: 'video/mp4', caption: 'clip', viewOnce: true },
      media: {
        kind: 'video',
        url: URL_OK,
        maxBytes: 64 * MiB,
        mimetype: 'video/mp4',
        fileName: null,
        caption: 'clip',
        viewOnce: true,
      },
      content: null,
    });
  });

  it('answers the exact validated audio, ignoring caption and viewOnce', () => {
    const params = { audio: { url: URL_OK }, mimetype: 'audio/ogg; codecs=opus', caption: 'x', viewOnce: true };
    expect(validate(body('audio', params))).toEqual({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'audio',
      simulateTyping: 0,
      message: null,
      params: { audio: { url: URL_OK }, mimetype: 'audio/ogg; codecs=opus' },
      media: {
        kind: 'audio',
        url: URL_OK,
        maxBytes: 16 * MiB,
        mimetype: 'audio/ogg; codecs=opus',
        fileName: null,
        caption: null,
        viewOnce: false,
      },
      content: null,
    });
  });

  it('answers the exact validated file', () => {
    const params = {
      document: { url: URL_OK },
      fileName: 'Invoice 2024-01 (final).pdf',
      mimetype: 'application/pdf',
      caption: 'Your invoice',
      viewOnce: true,
    };
    expect(validate(body('file', params))).toEqual({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'file',
      simulateTyping: 0,
      message: 'Your invoice',
      params: {
        document: { url: URL_OK },
        fileName: 'Invoice 2024-01 (final).pdf',
        mimetype: 'application/pdf',
        caption: 'Your invoice',
      },
      media: {
        kind: 'file',
        url: URL_OK,
        maxBytes: 100 * MiB,
        mimetype: 'application/pdf',
        fileName: 'Invoice 2024-01 (final).pdf',
        caption: 'Your invoice',
        viewOnce: false,
      },
      content: null,
    });
  });

  it('has the documented size limits', () => {
    expect(MEDIA_LIMITS).toEqual({
      image: 16 * MiB,
      video: 64 * MiB,
      audio: 16 * MiB,
      file: 100 * MiB,
      sticker: 1 * MiB,
    });
  });

  it('makes mimetype optional', () => {
    expect(validate(body('video', { video: { url: URL_OK } })).media?.mimetype).toBeNull();
    expect(validate(body('audio', { audio: { url: URL_OK } })).params).toEqual({ audio: { url: URL_OK } });
    expect(validate(body('file', { document: { url: URL_OK }, fileName: 'a.txt' })).params).toEqual({
      document: { url: URL_OK },
      fileName: 'a.txt',
    });
  });

  it.each([
    ['video', 'params.video.url'],
    ['audio', 'params.audio.url'],
    ['file', 'params.document.url'],
  ])('%s: a missing URL is a validation failure naming %s', (type, path) => {
    expectRefused(body(type, { fileName: 'a.txt' }), 'VALIDATION_FAILED', { [path]: ['is required'] });
  });

  it.each([
    ['video', 'video', 'params.video.url'],
    ['audio', 'audio', 'params.audio.url'],
    ['file', 'document', 'params.document.url'],
  ])('%s: a URL of the wrong form is an invalid media URL naming %s', (type, container, path) => {
    for (const url of ['ftp://x/y', 'x/y', 'https://u:p@x/y', 'https://x/ y']) {
      const error = expectRefused(body(type, { [container]: { url }, fileName: 'a.txt' }), 'INVALID_MEDIA_URL');
      expect(Object.keys(error.detail.errors ?? {})).toEqual([path]);
      expect(error.message).toBe('Invalid media URL');
    }
  });

  it('does not accept the URL under another type’s container', () => {
    expectRefused(body('file', { image: { url: URL_OK }, fileName: 'a.txt' }), 'VALIDATION_FAILED', {
      'params.document.url': ['is required'],
    });
  });

  it.each([
    ['image/png'],
    ['video/mp4'],
    ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    ['text/plain; charset=utf-8'],
    ['audio/ogg;codecs="opus"'],
    ['application/x-7z-compressed'],
  ])('accepts the mimetype %s', (mimetype) => {
    expect(validate(body('video', { video: { url: URL_OK }, mimetype })).media?.mimetype).toBe(mimetype);
  });

  it.each([
    ['video'],
    ['video/'],
    ['/mp4'],
    ['video mp4'],
    ['video/mp4 extra'],
    ['video/mp4;'],
    [''],
    [42],
    [ascii(300)],
  ])('refuses the mimetype %j', (mimetype) => {
    expectPath(body('video', { video: { url: URL_OK }, mimetype }), 'VALIDATION_FAILED', 'params.mimetype');
    expectPath(
      body('file', { document: { url: URL_OK }, fileName: 'a', mimetype }),
      'VALIDATION_FAILED',
      'params.mimetype',
    );
  });

  describe('fileName', () => {
    const file = (fileName: unknown) => body('file', { document: { url: URL_OK }, fileName });

    it.each([
      ['', 'must not be empty'],
      ['   ', 'must not be blank'],
      [42, 'must be a string'],
      ['a/b.pdf', "must not contain '/'"],
      ['../etc/passwd', "must not contain '/'"],
      ['a\u0000.pdf', 'must not contain control characters'],
      ['a\nb.pdf', 'must not contain control characters'],
      ['.', "must not be '.' or '..'"],
      ['..', "must not be '.' or '..'"],
      [ascii(256), 'must be at most 255 characters'],
    ])('refuses %j', (fileName, message) => {
      expectRefused(file(fileName), 'VALIDATION_FAILED', { 'params.fileName': [message] });
    });

    it.each([['a'], [ascii(255)], [emoji(255)], ['rapport été 2024.PDF'], ['C:\\odd\\but\\allowed.txt'], ['.env']])(
      'accepts %j',
      (fileName) => {
        expect(validate(file(fileName)).media?.fileName).toBe(fileName);
      },
    );
  });

  it('names a file without fileName after its URL, else leaves the name to the download (docs/internals.md, Whatspie compatibility)', () => {
    const named = (url: string, fileName?: unknown) =>
      validate(body('file', { document: { url }, ...(fileName === undefined ? {} : { fileName }) })).media?.fileName;
    expect(named('https://x.test/docs/report%20Q3.pdf')).toBe('report Q3.pdf');
    expect(named('https://x.test/docs/report.pdf', null)).toBe('report.pdf');
    expect(validate(body('file', { document: { url: 'https://x.test/a.pdf' } })).params).toEqual({
      document: { url: 'https://x.test/a.pdf' },
      fileName: 'a.pdf',
    });
    // No name in the URL: the answer's Content-Disposition names it, else "file" (fileNameAfterFetch).
    expect(named('https://x.test/')).toBeNull();
    expect(named('https://x.test/a/%2e%2e')).toBeNull();
    expect(named('https://x.test/a/%E0%A4%A')).toBeNull();
    expect(validate(body('file', { document: { url: 'https://x.test/' } })).params).toEqual({
      document: { url: 'https://x.test/' },
    });
    expect(named('https://x.test/a.pdf', 'mine.pdf')).toBe('mine.pdf');
  });

  it('limits the video and file captions to 4096 characters', () => {
    expectRefused(body('video', { video: { url: URL_OK }, caption: ascii(4097) }), 'MESSAGE_TOO_LONG', {
      'params.caption': ['must be at most 4096 characters'],
    });
    expectRefused(body('file', { document: { url: URL_OK }, fileName: 'a', caption: ascii(4097) }), 'MESSAGE_TOO_LONG');
    expect(validate(body('file', { document: { url: URL_OK }, fileName: 'a', caption: ascii(4096) })).message).toBe(
      ascii(4096),
    );
  });
});

describe('location', () => {
  it('answers the exact validated message', () => {
    const params = {
      location: { degreesLatitude: -6.2, degreesLongitude: 106.816666, name: 'Monas', address: 'Jakarta', zoom: 3 },
      extra: true,
    };
    expect(validate(body('location', params))).toEqual({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'location',
      simulateTyping: 0,
      message: null,
      params: { location: { degreesLatitude: -6.2, degreesLongitude: 106.816666, name: 'Monas', address: 'Jakarta' } },
      media: null,
      content: { type: 'location', latitude: -6.2, longitude: 106.816666, name: 'Monas', address: 'Jakarta' },
    });
  });

  it('makes name and address optional', () => {
    expect(validate(body('location', { location: { degreesLatitude: 0, degreesLongitude: 0 } }))).toMatchObject({
      params: { location: { degreesLatitude: 0, degreesLongitude: 0 } },
      content: { type: 'location', latitude: 0, longitude: 0 },
    });
    const result = validate(body('location', { location: { degreesLatitude: 1, degreesLongitude: 2, name: '' } }));
    expect(result.content).toEqual({ type: 'location', latitude: 1, longitude: 2 });
  });

  it.each([
    [90, 0],
    [-90, 0],
    [0, 180],
    [0, -180],
    [90, -180],
    [-89.999999, 179.999999],
  ])('accepts latitude %d and longitude %d', (degreesLatitude, degreesLongitude) => {
    expect(validate(body('location', { location: { degreesLatitude, degreesLongitude } })).content).toEqual({
      type: 'location',
      latitude: degreesLatitude,
      longitude: degreesLongitude,
    });
  });

  it.each([
    [90.0001, 0, 'params.location.degreesLatitude', 'must be between -90 and 90'],
    [-90.0001, 0, 'params.location.degreesLatitude', 'must be between -90 and 90'],
    [0, 180.1, 'params.location.degreesLongitude', 'must be between -180 and 180'],
    [0, -180.1, 'params.location.degreesLongitude', 'must be between -180 and 180'],
    ['10', 0, 'params.location.degreesLatitude', 'must be a number'],
    [0, '10', 'params.location.degreesLongitude', 'must be a number'],
    [Number.NaN, 0, 'params.location.degreesLatitude', 'must be a number'],
    [0, Number.POSITIVE_INFINITY, 'params.location.degreesLongitude', 'must be a number'],
    [true, 0, 'params.location.degreesLatitude', 'must be a number'],
    [undefined, 0, 'params.location.degreesLatitude', 'is required'],
    [0, null, 'params.location.degreesLongitude', 'is required'],
  ])('refuses latitude %j and longitude %j', (degreesLatitude, degreesLongitude, path, message) => {
    expectRefused(body('location', { location: { degreesLatitude, degreesLongitude } }), 'VALIDATION_FAILED', {
      [path]: [message],
    });
  });

  it('names both coordinates when the location is missing', () => {
    expectRefused(body('location', {}), 'VALIDATION_FAILED', {
      'params.location.degreesLatitude': ['is required'],
      'params.location.degreesLongitude': ['is required'],
    });
    expectRefused(body('location', { location: 'Jakarta' }), 'VALIDATION_FAILED', {
      'params.location': ['must be an object'],
    });
  });

  it('limits name and address to 1000 characters', () => {
    const location = { degreesLatitude: 1, degreesLongitude: 1 };
    expect(
      validate(body('location', { location: { ...location, name: ascii(1000), address: emoji(1000) } })).content,
    ).toMatchObject({ name: ascii(1000), address: emoji(1000) });
    expectRefused(body('location', { location: { ...location, name: ascii(1001), address: 7 } }), 'VALIDATION_FAILED', {
      'params.location.name': ['must be at most 1000 characters'],
      'params.location.address': ['must be a string'],
    });
  });
});

/** A valid list with `sections` sections of `rows` rows, row ids unique. */
function makeList(sections = 1, rows = 1): Record<string, any> {
  return {
    title: 'Menu',
    text: 'Pick one',
    footer: 'Thanks',
    buttonText: 'Open',
    sections: Array.from({ length: sections }, (_, s) => ({
      title: `Section ${s}`,
      rows: Array.from({ length: rows }, (_, r) => ({ title: `Row ${s}.${r}`, rowId: `row-${s}-${r}` })),
    })),
  };
}

/** The list with `change` applied to a deep copy. */
function listWith(change: (list: Record<string, any>) => void, sections = 1, rows = 1): Record<string, any> {
  const list = makeList(sections, rows);
  change(list);
  return list;
}

function listErrors(params: unknown): Record<string, string[]> {
  const error = expectRefused(body('list', params), 'INVALID_LIST');
  expect(error.message).toBe('Invalid list parameters');
  return error.detail.errors ?? {};
}

describe('list', () => {
  it('answers the exact validated message, dropping unknown fields', () => {
    const params = {
      title: 'Menu',
      text: 'Pick *one*',
      footer: 'Thanks',
      buttonText: 'Open',
      extra: 1,
      sections: [
        {
          title: 'Drinks',
          extra: 2,
          rows: [
            { title: 'Tea', rowId: 'tea', description: 'Hot', extra: 3 },
            { title: 'Coffee', rowId: 'coffee' },
          ],
        },
        { title: 'Food', rows: [{ title: 'Cake', rowId: 'cake', description: '' }] },
      ],
    };
    const sections = [
      {
        title: 'Drinks',
        rows: [
          { title: 'Tea', rowId: 'tea', description: 'Hot' },
          { title: 'Coffee', rowId: 'coffee' },
        ],
      },
      { title: 'Food', rows: [{ title: 'Cake', rowId: 'cake' }] },
    ];
    expect(validate(body('list', params, { simulate_typing: true }))).toEqual({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'list',
      simulateTyping: 1,
      message: 'Pick *one*',
      params: { title: 'Menu', text: 'Pick *one*', footer: 'Thanks', buttonText: 'Open', sections },
      media: null,
      content: { type: 'list', title: 'Menu', text: 'Pick *one*', footer: 'Thanks', buttonText: 'Open', sections },
    });
  });

  it('makes the footer optional', () => {
    const result = validate(
      body(
        'list',
        listWith((l) => delete l.footer),
      ),
    );
    expect(result.params).not.toHaveProperty('footer');
    expect(result.content).not.toHaveProperty('footer');
    expect(
      validate(
        body(
          'list',
          listWith((l) => (l.footer = '')),
        ),
      ).params,
    ).not.toHaveProperty('footer');
  });

  describe('lengths, in user-perceived characters', () => {
    it.each([
      ['title', 24, (l: any, v: string) => (l.title = v)],
      ['text', 1024, (l: any, v: string) => (l.text = v)],
      ['footer', 60, (l: any, v: string) => (l.footer = v)],
      ['buttonText', 20, (l: any, v: string) => (l.buttonText = v)],
      ['sections.0.title', 24, (l: any, v: string) => (l.sections[0].title = v)],
      ['sections.0.rows.0.title', 24, (l: any, v: string) => (l.sections[0].rows[0].title = v)],
      ['sections.0.rows.0.rowId', 200, (l: any, v: string) => (l.sections[0].rows[0].rowId = v)],
      ['sections.0.rows.0.description', 72, (l: any, v: string) => (l.sections[0].rows[0].description = v)],
    ])('%s: %i accepted, one more refused', (path, max, set) => {
      for (const text of [ascii, emoji]) {
        expect(() =>
          validate(
            body(
              'list',
              listWith((l) => set(l, text(max))),
            ),
          ),
        ).not.toThrow();
        expect(listErrors(listWith((l) => set(l, text(max + 1))))).toEqual({
          [path]: [`must be at most ${max} characters`],
        });
      }
    });
  });

  it.each([
    ['title', (l: any) => delete l.title, 'is required'],
    ['title', (l: any) => (l.title = null), 'is required'],
    ['title', (l: any) => (l.title = ''), 'must not be empty'],
    ['title', (l: any) => (l.title = '  '), 'must not be blank'],
    ['title', (l: any) => (l.title = 5), 'must be a string'],
    ['text', (l: any) => delete l.text, 'is required'],
    ['text', (l: any) => (l.text = ['x']), 'must be a string'],
    ['footer', (l: any) => (l.footer = 5), 'must be a string'],
    ['buttonText', (l: any) => delete l.buttonText, 'is required'],
    ['buttonText', (l: any) => (l.buttonText = ''), 'must not be empty'],
    ['sections', (l: any) => delete l.sections, 'is required'],
    ['sections', (l: any) => (l.sections = {}), 'must be an array'],
    ['sections', (l: any) => (l.sections = []), 'must have at least 1 section'],
    ['sections.0', (l: any) => (l.sections[0] = 'x'), 'must be an object'],
    ['sections.0.title', (l: any) => delete l.sections[0].title, 'is required'],
    ['sections.0.rows', (l: any) => delete l.sections[0].rows, 'is required'],
    ['sections.0.rows', (l: any) => (l.sections[0].rows = 'x'), 'must be an array'],
    ['sections.0.rows', (l: any) => (l.sections[0].rows = []), 'must have at least 1 row'],
    ['sections.0.rows.0', (l: any) => (l.sections[0].rows[0] = null), 'must be an object'],
    ['sections.0.rows.0.title', (l: any) => delete l.sections[0].rows[0].title, 'is required'],
    ['sections.0.rows.0.rowId', (l: any) => delete l.sections[0].rows[0].rowId, 'is required'],
    ['sections.0.rows.0.rowId', (l: any) => (l.sections[0].rows[0].rowId = ''), 'must not be empty'],
    ['sections.0.rows.0.rowId', (l: any) => (l.sections[0].rows[0].rowId = 3), 'must be a string'],
    ['sections.0.rows.0.description', (l: any) => (l.sections[0].rows[0].description = 3), 'must be a string'],
  ])('%s: refuses (%#) with "%s"', (path, change, message) => {
    expect(listErrors(listWith(change))).toEqual({ [path]: [message] });
  });

  it('accepts a blank row id (an identifier, not a text shown)', () => {
    expect(() =>
      validate(
        body(
          'list',
          listWith((l) => (l.sections[0].rows[0].rowId = ' ')),
        ),
      ),
    ).not.toThrow();
  });

  it('accepts 10 sections and refuses 11', () => {
    expect(validate(body('list', makeList(10, 1))).content).toMatchObject({ type: 'list' });
    expect(listErrors(makeList(11, 1))).toEqual({ sections: ['must have at most 10 sections'] });
  });

  it('accepts 10 rows in a section and refuses 11', () => {
    expect(() => validate(body('list', makeList(1, 10)))).not.toThrow();
    expect(listErrors(makeList(2, 11))).toEqual({
      'sections.0.rows': ['must have at most 10 rows'],
      'sections.1.rows': ['must have at most 10 rows'],
    });
  });

  it('accepts 100 rows in total (10 × 10)', () => {
    const result = validate(body('list', makeList(10, 10)));
    expect((result.params.sections as any[]).flatMap((s) => s.rows)).toHaveLength(100);
  });

  it('refuses more than 100 rows in total (limits widened so that only this rule applies)', () => {
    const wide = { ...LIST_LIMITS, sections: 20, rowsPerSection: 20 };
    const hundred = makeList(5, 20);
    expect(hundred.sections).toHaveLength(5);
    expect(() => validateListParams(hundred, wide)).not.toThrow();
    const hundredAndOne = structuredClone(hundred);
    hundredAndOne.sections.push({ title: 'Extra', rows: [{ title: 'One more', rowId: 'one-more' }] });
    let error: unknown;
    try {
      validateListParams(hundredAndOne, wide);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('INVALID_LIST');
    expect((error as ApiError).detail.errors).toEqual({ sections: ['must have at most 100 rows in total'] });
  });

  it('reports every aggregate rule broken by 11 sections of 11 rows, and checks no item past a count limit', () => {
    // Issue 10 item 1: the items of an array over its count limit are not checked one by one.
    expect(listErrors(makeList(11, 11))).toEqual({
      sections: ['must have at most 10 sections', 'must have at most 100 rows in total'],
    });
    expect(listErrors(makeList(2, 11))).toEqual({
      'sections.0.rows': ['must have at most 10 rows'],
      'sections.1.rows': ['must have at most 10 rows'],
    });
  });

  it('refuses a row id used twice, within a section and across sections', () => {
    expect(listErrors(listWith((l) => (l.sections[0].rows[1].rowId = 'row-0-0'), 1, 2))).toEqual({
      'sections.0.rows.1.rowId': ['must be unique within the list (already used at sections.0.rows.0.rowId)'],
    });
    expect(listErrors(listWith((l) => (l.sections[2].rows[1].rowId = 'row-0-1'), 3, 2))).toEqual({
      'sections.2.rows.1.rowId': ['must be unique within the list (already used at sections.0.rows.1.rowId)'],
    });
  });

  it('treats row ids as case- and space-sensitive', () => {
    const list = listWith(
      (l) => {
        l.sections[0].rows[0].rowId = 'a';
        l.sections[0].rows[1].rowId = 'A';
        l.sections[0].rows[2].rowId = 'a ';
      },
      1,
      3,
    );
    expect(() => validate(body('list', list))).not.toThrow();
  });

  it('reports every violation, not only the first', () => {
    const list = {
      title: ascii(25),
      buttonText: 7,
      footer: ascii(61),
      sections: [
        { title: 'ok', rows: [] },
        {
          rows: [
            { title: 'r', rowId: 'dup' },
            { title: ascii(25), rowId: 'dup', description: ascii(73) },
          ],
        },
        'nope',
      ],
    };
    expect(listErrors(list)).toEqual({
      title: ['must be at most 24 characters'],
      text: ['is required'],
      footer: ['must be at most 60 characters'],
      buttonText: ['must be a string'],
      'sections.0.rows': ['must have at least 1 row'],
      'sections.1.title': ['is required'],
      'sections.1.rows.1.title': ['must be at most 24 characters'],
      'sections.1.rows.1.rowId': ['must be unique within the list (already used at sections.1.rows.0.rowId)'],
      'sections.1.rows.1.description': ['must be at most 72 characters'],
      'sections.2': ['must be an object'],
    });
  });

  it('reports only the count of a huge list, not each of its items', () => {
    const list = { ...makeList(1, 1), sections: Array.from({ length: 100_000 }, () => ({})) };
    expect(listErrors(list)).toEqual({ sections: ['must have at most 10 sections'] });
  });

  it('caps the report', () => {
    const section = (s: number) => ({
      title: ascii(25),
      rows: Array.from({ length: 10 }, (_, r) => ({ title: ascii(25), rowId: `r${s}.${r}`, description: ascii(73) })),
    });
    const list = { ...makeList(1, 1), sections: Array.from({ length: 10 }, (_, s) => section(s)) };
    expect(Object.keys(listErrors(list)).length).toBe(MAX_REPORTED_PATHS);
  });

  it('refuses non-object params with Validation failed, as for every type', () => {
    expectRefused(body('list', ['x']), 'VALIDATION_FAILED', { params: ['must be an object'] });
  });
});

const URL_BUTTON = { index: 1, urlButton: { displayText: 'Visit', url: 'https://example.com/shop' } };
const CALL_BUTTON = { index: 2, callButton: { displayText: 'Call us', phoneNumber: '+6281234567890' } };
const REPLY_BUTTON = { index: 3, quickReplyButton: { displayText: 'Yes', id: 'answer-yes' } };

describe('template', () => {
  it('answers the exact validated message with each kind of button', () => {
    const params = {
      text: 'Choose',
      footer: 'Shop',
      templateButtons: [
        { ...URL_BUTTON, extra: 1 },
        { ...CALL_BUTTON, callButton: { ...CALL_BUTTON.callButton, extra: 2 } },
        REPLY_BUTTON,
      ],
      extra: 3,
    };
    const buttons = [URL_BUTTON, CALL_BUTTON, REPLY_BUTTON];
    expect(validate(body('template', params))).toEqual({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'template',
      simulateTyping: 0,
      message: 'Choose',
      params: { text: 'Choose', footer: 'Shop', templateButtons: buttons },
      media: null,
      content: { type: 'template', text: 'Choose', footer: 'Shop', buttons },
    });
  });

  it.each([[URL_BUTTON], [CALL_BUTTON], [REPLY_BUTTON]])('accepts a single %j', (button) => {
    expect(validate(body('template', { text: 'x', templateButtons: [button] })).content).toEqual({
      type: 'template',
      text: 'x',
      buttons: [button],
    });
  });

  it('accepts a call number without +', () => {
    const button = { index: 1, callButton: { displayText: 'Call', phoneNumber: '6281234567890' } };
    expect(validate(body('template', { text: 'x', templateButtons: [button] })).params.templateButtons).toEqual([
      button,
    ]);
  });

  it('accepts 3 buttons and refuses 4 and 0', () => {
    const four = [URL_BUTTON, CALL_BUTTON, REPLY_BUTTON, { ...REPLY_BUTTON, index: 4 }];
    expectRefused(body('template', { text: 'x', templateButtons: four }), 'VALIDATION_FAILED', {
      'params.templateButtons': ['must have at most 3 buttons'],
    });
    expectRefused(body('template', { text: 'x', templateButtons: [] }), 'VALIDATION_FAILED', {
      'params.templateButtons': ['must have at least 1 button'],
    });
  });

  it.each([
    [{ templateButtons: [URL_BUTTON] }, 'params.text', 'is required'],
    [{ text: '', templateButtons: [URL_BUTTON] }, 'params.text', 'must not be empty'],
    [{ text: ascii(1025), templateButtons: [URL_BUTTON] }, 'params.text', 'must be at most 1024 characters'],
    [{ text: 'x', footer: ascii(61), templateButtons: [URL_BUTTON] }, 'params.footer', 'must be at most 60 characters'],
    [{ text: 'x', footer: 1, templateButtons: [URL_BUTTON] }, 'params.footer', 'must be a string'],
    [{ text: 'x' }, 'params.templateButtons', 'is required'],
    [{ text: 'x', templateButtons: URL_BUTTON }, 'params.templateButtons', 'must be an array'],
    [{ text: 'x', templateButtons: ['x'] }, 'params.templateButtons.0', 'must be an object'],
  ])('refuses params (%#)', (params, path, message) => {
    expectRefused(body('template', params), 'VALIDATION_FAILED', { [path]: [message] });
  });

  it('accepts text of 1024 characters and a footer of 60', () => {
    const params = { text: emoji(1024), footer: emoji(60), templateButtons: [URL_BUTTON] };
    expect(validate(body('template', params)).message).toBe(emoji(1024));
  });

  /** The refusal of a template whose second button is `button` (the first is valid). */
  function secondButton(button: unknown): Record<string, string[]> {
    const error = expectRefused(
      body('template', { text: 'x', templateButtons: [URL_BUTTON, button] }),
      'VALIDATION_FAILED',
    );
    return error.detail.errors ?? {};
  }

  const badButtons: Array<[button: unknown, path: string, message: string]> = [
    [{ index: 2 }, 'params.templateButtons.1', 'must have exactly one of urlButton, callButton, quickReplyButton'],
    [
      { index: 2, urlButton: URL_BUTTON.urlButton, quickReplyButton: REPLY_BUTTON.quickReplyButton },
      'params.templateButtons.1',
      'must have exactly one of urlButton, callButton, quickReplyButton',
    ],
    [{ index: 2, urlButton: 'https://x.test' }, 'params.templateButtons.1.urlButton', 'must be an object'],
    [
      { index: 2, urlButton: { displayText: 'Go', url: 'ftp://x' } },
      'params.templateButtons.1.urlButton.url',
      'must be an absolute http or https URL',
    ],
    [
      { index: 2, urlButton: { displayText: 'Go', url: '/relative' } },
      'params.templateButtons.1.urlButton.url',
      'must be an absolute http or https URL',
    ],
    [{ index: 2, urlButton: { displayText: 'Go' } }, 'params.templateButtons.1.urlButton.url', 'is required'],
    [
      { index: 2, urlButton: { displayText: 'Go', url: 5 } },
      'params.templateButtons.1.urlButton.url',
      'must be a string',
    ],
    [
      { index: 2, urlButton: { url: 'https://x.test' } },
      'params.templateButtons.1.urlButton.displayText',
      'is required',
    ],
    [
      { index: 2, urlButton: { displayText: ascii(21), url: 'https://x.test' } },
      'params.templateButtons.1.urlButton.displayText',
      'must be at most 20 characters',
    ],
    [
      { index: 2, callButton: { displayText: 'Call' } },
      'params.templateButtons.1.callButton.phoneNumber',
      'is required',
    ],
    ...[
      '0812345678',
      '00628123456',
      '+0812345678',
      '62 812345678',
      '62-812345678',
      '++6281234567',
      '123456',
      '+1234567890123456',
      6281234567,
    ].map(
      (phoneNumber) =>
        [
          { index: 2, callButton: { displayText: 'Call', phoneNumber } },
          'params.templateButtons.1.callButton.phoneNumber',
          'must be a phone number in international format: country code first, digits only',
        ] as [unknown, string, string],
    ),
    [
      { index: 2, quickReplyButton: { displayText: 'Yes' } },
      'params.templateButtons.1.quickReplyButton.id',
      'is required',
    ],
    [
      { index: 2, quickReplyButton: { displayText: 'Yes', id: '' } },
      'params.templateButtons.1.quickReplyButton.id',
      'must not be empty',
    ],
    [
      { index: 2, quickReplyButton: { displayText: 'Yes', id: ascii(201) } },
      'params.templateButtons.1.quickReplyButton.id',
      'must be at most 200 characters',
    ],
    [
      { index: 2, quickReplyButton: { displayText: ' ', id: 'y' } },
      'params.templateButtons.1.quickReplyButton.displayText',
      'must not be blank',
    ],
    [{ quickReplyButton: REPLY_BUTTON.quickReplyButton }, 'params.templateButtons.1.index', 'is required'],
    [
      { index: 0, quickReplyButton: REPLY_BUTTON.quickReplyButton },
      'params.templateButtons.1.index',
      'must be an integer of at least 1',
    ],
    [
      { index: 1.5, quickReplyButton: REPLY_BUTTON.quickReplyButton },
      'params.templateButtons.1.index',
      'must be an integer of at least 1',
    ],
    [
      { index: '2', quickReplyButton: REPLY_BUTTON.quickReplyButton },
      'params.templateButtons.1.index',
      'must be an integer of at least 1',
    ],
    [
      { index: 1, quickReplyButton: REPLY_BUTTON.quickReplyButton },
      'params.templateButtons.1.index',
      'must be unique (already used by params.templateButtons.0)',
    ],
  ];

  it.each(badButtons)('refuses a button (%#)', (button, path, message) => {
    expect(secondButton(button)).toEqual({ [path]: [message] });
  });

  it('accepts display texts of 20 characters and reply ids of 200', () => {
    const button = { index: 9, quickReplyButton: { displayText: emoji(20), id: emoji(200) } };
    expect(validate(body('template', { text: 'x', templateButtons: [button] })).params.templateButtons).toEqual([
      button,
    ]);
  });

  it('refuses template text over the limit as a validation failure, not Message too long', () => {
    expect(refusal(body('template', { text: ascii(5000), templateButtons: [URL_BUTTON] })).code).toBe(
      'VALIDATION_FAILED',
    );
  });
});

describe('unknown fields', () => {
  it('are ignored at the top level and never echoed', () => {
    const result = validate(body('chat', { text: 'hi' }, { foo: 1, file_url: 'x', status: 'sent', id: 'abc' }));
    expect(result).toEqual({
      device: DEVICE,
      receiver: RECEIVER,
      type: 'chat',
      simulateTyping: 0,
      message: 'hi',
      params: { text: 'hi' },
      media: null,
      content: { type: 'chat', text: 'hi' },
    });
  });

  it('do not leak in through the prototype', () => {
    const params = JSON.parse('{"__proto__": {"text": "sneaky"}, "constructor": {"text": 1}}');
    expectRefused(body('chat', params), 'VALIDATION_FAILED', { 'params.text': ['is required'] });
    const evil = JSON.parse('{"__proto__": {"type": "chat"}, "device": "6281234567890", "receiver": "6281234567890"}');
    expectRefused(evil, 'VALIDATION_FAILED', { params: ['is required'] });
  });
});

// docs/internals.md, Whatspie compatibility: the older shapes Whatspie clients send are mapped to the canonical body in one
// place (src/messages/canonical.ts) and give the same validated message as the canonical shape.
describe('older and alias shapes (docs/internals.md, Whatspie compatibility)', () => {
  const URL_OK = 'https://cdn.example.com/a.png';
  const same = (alias: unknown, canonical: unknown) => expect(validate(alias)).toEqual(validate(canonical));

  it('reads type "text" as chat', () => {
    same(body('text', undefined, { message: 'hi' }), body('chat', { text: 'hi' }));
  });

  it('reads a top-level file_url as the media URL and message as its caption', () => {
    same(
      body('image', undefined, { file_url: URL_OK, message: 'look' }),
      body('image', { image: { url: URL_OK }, caption: 'look' }),
    );
    same(body('video', {}, { file_url: URL_OK }), body('video', { video: { url: URL_OK } }));
    same(
      body('file', { fileName: 'a.pdf' }, { file_url: URL_OK, message: 'the report' }),
      body('file', { document: { url: URL_OK }, fileName: 'a.pdf', caption: 'the report' }),
    );
    // Audio has no caption: the message is not taken as one.
    expect(validate(body('audio', undefined, { file_url: URL_OK, message: 'x' })).params).toEqual({
      audio: { url: URL_OK },
    });
  });

  it('prefers the canonical field when both are given', () => {
    const result = validate(
      body(
        'image',
        { image: { url: URL_OK }, caption: 'mine' },
        { file_url: 'https://x.test/b.png', message: 'other' },
      ),
    );
    expect(result.params).toEqual({ image: { url: URL_OK }, caption: 'mine' });
  });

  it('names the field the client sent when it is wrong', () => {
    expectRefused(body('image', undefined, { file_url: 'ftp://x/a.png' }), 'INVALID_IMAGE_URL', {
      file_url: ['must be an absolute http or https URL'],
    });
    expectRefused(body('image', undefined, { file_url: URL_OK, message: ascii(4097) }), 'MESSAGE_TOO_LONG', {
      message: ['must be at most 4096 characters'],
    });
  });

  it('reads a video sent as type file with params.video as a video', () => {
    const result = validate(body('file', { video: { url: URL_OK }, caption: 'clip' }));
    expect(result.type).toBe('video');
    expect(result.params).toEqual({ video: { url: URL_OK }, caption: 'clip' });
    expect(result.media?.kind).toBe('video');
  });

  it('reads params.lat/long and top-level latitude/longitude/location_name as the location', () => {
    const canonical = body('location', { location: { degreesLatitude: -6.2, degreesLongitude: 106.8 } });
    same(body('location', { lat: -6.2, long: 106.8 }), canonical);
    same(body('location', undefined, { latitude: -6.2, longitude: 106.8 }), canonical);
    expect(validate(body('location', undefined, { latitude: 1, longitude: 2, location_name: 'Monas' })).params).toEqual(
      {
        location: { degreesLatitude: 1, degreesLongitude: 2, name: 'Monas' },
      },
    );
    expectRefused(body('location', { lat: 91, long: 0 }), 'VALIDATION_FAILED', {
      'params.lat': ['must be between -90 and 90'],
    });
    // The client that sends params.lat/long sends the name and address beside them (research 5.3, C2).
    same(
      body('location', { lat: -6.2, long: 106.8, name: 'Jakarta', address: 'Indonesia' }),
      body('location', {
        location: { degreesLatitude: -6.2, degreesLongitude: 106.8, name: 'Jakarta', address: 'Indonesia' },
      }),
    );
    expectRefused(body('location', { lat: 1, long: 2, name: 'x'.repeat(1001) }), 'VALIDATION_FAILED', {
      'params.name': ['must be at most 1000 characters'],
    });
  });

  it('reads params.buttons as quick-reply template buttons', () => {
    same(
      body('template', {
        text: 'Pick',
        buttons: [
          { buttonId: 'yes', buttonText: { displayText: 'Yes' } },
          { buttonId: 'no', buttonText: { displayText: 'No' } },
        ],
      }),
      body('template', {
        text: 'Pick',
        templateButtons: [
          { index: 1, quickReplyButton: { displayText: 'Yes', id: 'yes' } },
          { index: 2, quickReplyButton: { displayText: 'No', id: 'no' } },
        ],
      }),
    );
    expectRefused(
      body('template', { text: 'Pick', buttons: [{ buttonText: { displayText: 'Yes' } }] }),
      'VALIDATION_FAILED',
      {
        'params.buttons.0.buttonId': ['is required'],
      },
    );
    expectRefused(body('template', { text: 'Pick', buttons: [] }), 'VALIDATION_FAILED', {
      'params.buttons': ['must have at least 1 button'],
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Property: any input is either accepted or refused with a well-formed 400 ApiError.

const anyJson = fc.jsonValue({ maxDepth: 4 });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, anyJson, fc.constant(undefined), fc.constant(null));
const phone = fc.oneof(
  fc.constantFrom(DEVICE, '+62812345678', '0812345678', '62 81234567', '123456', '1234567890123456'),
  fc.stringMatching(/^[0-9+ -]{0,17}$/),
);
const text = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom('', ' ', ascii(25), ascii(73), ascii(1025), emoji(21), FAMILY),
);
const url = fc.oneof(fc.webUrl(), fc.constantFrom('ftp://x', 'http://', 'https://u:p@x/', '/x', ''), fc.string());
const row = fc.record(
  { title: maybe(text), rowId: maybe(fc.constantFrom('a', 'b', 'c', '', ascii(201))), description: maybe(text) },
  { requiredKeys: [] },
);
const section = fc.record(
  { title: maybe(text), rows: maybe(fc.array(maybe(row), { maxLength: 12 })) },
  { requiredKeys: [] },
);
const button = fc.record(
  {
    index: maybe(fc.integer({ min: -1, max: 4 })),
    urlButton: maybe(fc.record({ displayText: maybe(text), url: maybe(url) }, { requiredKeys: [] })),
    callButton: maybe(fc.record({ displayText: maybe(text), phoneNumber: maybe(phone) }, { requiredKeys: [] })),
    quickReplyButton: maybe(fc.record({ displayText: maybe(text), id: maybe(text) }, { requiredKeys: [] })),
  },
  { requiredKeys: [] },
);
const params = fc.record(
  {
    text: maybe(text),
    title: maybe(text),
    footer: maybe(text),
    buttonText: maybe(text),
    sections: maybe(fc.array(maybe(section), { maxLength: 12 })),
    image: maybe(fc.record({ url: maybe(url) }, { requiredKeys: [] })),
    video: maybe(fc.record({ url: maybe(url) }, { requiredKeys: [] })),
    audio: maybe(fc.record({ url: maybe(url) }, { requiredKeys: [] })),
    document: maybe(fc.record({ url: maybe(url) }, { requiredKeys: [] })),
    caption: maybe(text),
    viewOnce: maybe(fc.boolean()),
    mimetype: maybe(fc.constantFrom('video/mp4', 'audio/ogg; codecs=opus', 'x', '')),
    fileName: maybe(fc.constantFrom('a.pdf', '', '/', '..', 'a\u0000b')),
    location: maybe(
      fc.record(
        {
          degreesLatitude: maybe(fc.double()),
          degreesLongitude: maybe(fc.double()),
          name: maybe(text),
          address: maybe(text),
        },
        { requiredKeys: [] },
      ),
    ),
    templateButtons: maybe(fc.array(maybe(button), { maxLength: 5 })),
  },
  { requiredKeys: [] },
);
const shapedBody = fc.record(
  {
    type: maybe(fc.constantFrom(...MESSAGE_TYPES, 'button')),
    device: maybe(phone),
    receiver: maybe(phone),
    simulate_typing: maybe(fc.constantFrom(0, 1, true, false, 2, '1')),
    message: maybe(text),
    params: maybe(params),
  },
  { requiredKeys: [] },
);

function assertWellFormedRefusal(error: unknown): void {
  expect(error).toBeInstanceOf(ApiError);
  const apiError = error as ApiError;
  expect(apiError.statusCode).toBe(400);
  const rendered = errorBody(apiError);
  expect(rendered.code).toBe(400);
  expect(typeof rendered.message).toBe('string');
  if (rendered.error !== undefined) expect(typeof rendered.error).toBe('string');
  expect(rendered.error !== undefined || rendered.errors !== undefined).toBe(true);
  for (const [path, messages] of Object.entries(rendered.errors ?? {})) {
    expect(typeof path).toBe('string');
    expect(Array.isArray(messages) && messages.length > 0).toBe(true);
    for (const message of messages) expect(typeof message).toBe('string');
  }
  // The answer survives JSON unchanged (nothing but plain strings, arrays and objects).
  expect(JSON.parse(JSON.stringify(rendered))).toEqual(rendered);
}

function checkAnyInput(input: unknown, requireReceiver: boolean): void {
  let result: ValidatedMessage;
  try {
    result = validateSendRequest(input, { requireReceiver });
  } catch (error) {
    assertWellFormedRefusal(error);
    return;
  }
  // Accepted: the echoed params validate again to the same message (normalisation is stable).
  expect(JSON.parse(JSON.stringify(result.params))).toEqual(result.params);
  const again = validateSendRequest({ ...(input as object), params: result.params }, { requireReceiver });
  expect(again).toEqual(result);
}

describe('any input', () => {
  it('is accepted or refused with a well-formed 400 ApiError (arbitrary JSON)', () => {
    fc.assert(
      fc.property(anyJson, fc.boolean(), (input, requireReceiver) => checkAnyInput(input, requireReceiver)),
      { numRuns: 500 },
    );
  });

  it('is accepted or refused with a well-formed 400 ApiError (bodies shaped like messages)', () => {
    fc.assert(
      fc.property(shapedBody, fc.boolean(), (input, requireReceiver) => checkAnyInput(input, requireReceiver)),
      { numRuns: 2000 },
    );
  });

  it('is accepted or refused with a well-formed 400 ApiError (anything, not only JSON)', () => {
    fc.assert(
      fc.property(fc.anything({ maxDepth: 3, withNullPrototype: true, withObjectString: true }), (input) =>
        checkAnyInput(input, true),
      ),
      { numRuns: 300 },
    );
  });
});
