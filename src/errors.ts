/**
 * The one error type of the API and the catalogue of every error it can answer.
 *
 * Owns: the status code and exact message of each error (clients are written
 * against these strings, spec 7.2 and docs/api.md), and the plain body an error
 * is written as (the HTTP answer, and a refused webhook reply's record). Services
 * throw `ApiError` with a code from this catalogue; http/error-handler.ts maps
 * everything thrown onto it and answers.
 * Must never: import anything (it sits below every layer, services and http/
 * alike), or carry internal details (SQL, paths, stacks) into `error`.
 */
export const ERRORS = {
  // Framework-level (docs/internals.md, Answers and errors)
  NOT_FOUND: [404, 'Not found'],
  METHOD_NOT_ALLOWED: [405, 'Method not allowed'],
  INVALID_JSON: [400, 'Invalid JSON body'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported media type'],
  PAYLOAD_TOO_LARGE: [413, 'Payload too large'],
  BAD_REQUEST: [400, 'Bad request'],
  REQUEST_TIMEOUT: [408, 'Request timeout'],
  HEADERS_TOO_LARGE: [431, 'Request header fields too large'],
  VALIDATION_FAILED: [400, 'Validation failed'],
  UNAUTHORIZED: [401, 'Unauthorized'],
  INTERNAL: [500, 'Internal server error'],
  NOT_READY: [503, 'Not ready'],
  STORE_UNAVAILABLE: [503, 'Service unavailable'],
  // Devices (spec 7.2, docs/internals.md, Devices and pairing)
  INVALID_PACKAGE: [400, 'Invalid package type'],
  DEVICE_LIMIT: [403, 'Device limit exceeded'],
  DEVICE_NOT_FOUND: [404, 'Device not found'],
  DEVICE_SUSPENDED: [403, 'Device suspended'],
  QR_FAILED: [500, 'QR code generation failed'],
  DEVICE_OFFLINE: [409, 'Device offline, reconnecting'],
  DEVICE_LOGGED_OUT: [409, 'Device logged out'],
  PAIRING_CODE_FAILED: [500, 'Pairing code generation failed'],
  PHONE_MISMATCH: [400, 'Phone number mismatch'],
  // The node holding the device's connection is down and no node took it over yet (docs/internals.md, Clusters).
  DEVICE_UNAVAILABLE: [503, 'Device unavailable, retry shortly'],
  INVALID_PHONE: [400, 'Invalid phone number format'],
  // Messages (spec 7.2, docs/internals.md, Quota; Sending)
  INVALID_MESSAGE_TYPE: [400, 'Invalid message type'],
  MESSAGE_TOO_LONG: [400, 'Message too long'],
  INVALID_LIST: [400, 'Invalid list parameters'],
  INVALID_CONTACT: [400, 'Invalid contact parameters'],
  INVALID_POLL: [400, 'Invalid poll parameters'],
  INVALID_IMAGE_URL: [400, 'Invalid image URL'],
  UNSUPPORTED_FORMAT: [400, 'Unsupported file format'],
  FILE_TOO_LARGE: [400, 'File too large'],
  IMAGE_DOWNLOAD_FAILED: [400, 'Unable to download image'],
  INVALID_MEDIA_URL: [400, 'Invalid media URL'],
  MEDIA_DOWNLOAD_FAILED: [400, 'Unable to download media'],
  DEVICE_NOT_CONNECTED: [400, 'Device not connected'],
  QUOTA_EXCEEDED: [403, 'Quota exceeded'],
  MESSAGE_NOT_FOUND: [404, 'Message not found'],
  // Message actions (docs/api.md, Message actions)
  MESSAGE_NOT_EDITABLE: [400, 'Message cannot be edited'],
  MESSAGE_NOT_DELETABLE: [400, 'Message cannot be deleted'],
  MESSAGE_NOT_READABLE: [400, 'Message cannot be marked read'],
  MESSAGE_NOT_FORWARDABLE: [400, 'Message cannot be forwarded'],
  IDEMPOTENCY_REUSE: [409, 'Idempotency key reuse'],
  IDEMPOTENCY_IN_USE: [409, 'Idempotency key in use'],
  // Incoming media (DECISIONS 15; docs/api.md, Media)
  MEDIA_NOT_FOUND: [404, 'Media not found'],
  MEDIA_NOT_READY: [409, 'Media not ready'],
  MEDIA_EXPIRED: [410, 'Media expired'],
  MEDIA_SIGNATURE_INVALID: [403, 'Invalid signature'],
  MEDIA_SIGNATURE_EXPIRED: [403, 'Signature expired'],
  RANGE_NOT_SATISFIABLE: [416, 'Range not satisfiable'],
  // Groups (spec 4.7 and 7.2, docs/internals.md, Groups)
  ACCESS_DENIED: [403, 'Access denied'],
  GROUP_NOT_FOUND: [404, 'Group not found'],
  GROUP_CAPACITY_EXCEEDED: [400, 'Group capacity exceeded'],
  GROUP_SETTING_REFUSED: [400, 'Group setting refused'],
  TOO_MANY_REQUESTS: [429, 'Too many requests'],
  // Webhook deliveries (docs/internals.md, Webhooks)
  DELIVERY_NOT_FOUND: [404, 'Delivery not found'],
  WEBHOOK_URL_NOT_SET: [400, 'Webhook URL not set'],
  // Account webhooks (DECISIONS 17; docs/webhooks.md, Several webhooks)
  WEBHOOK_NOT_FOUND: [404, 'Webhook not found'],
  WEBHOOK_LIMIT: [403, 'Webhook limit exceeded'],
  // Tokens (docs/internals.md, Accounts and tokens)
  TOKEN_NOT_FOUND: [404, 'Token not found'],
  CONFIRMATION_REQUIRED: [400, 'Confirmation required'],
  // The sandbox control API answers with the sandbox's own status and message (docs/internals.md, The network seam and the sandbox).
  SANDBOX_REJECTED: [400, 'Sandbox request rejected'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorDetail {
  /** A human-readable detail. */
  readonly error?: string;
  /** Validation failures: field path to messages. */
  readonly errors?: Record<string, string[]>;
  /** Extra response headers (Retry-After, Allow). */
  readonly headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: ErrorDetail = {},
    /** Only for SANDBOX_REJECTED: the sandbox's own status and message. */
    override?: { statusCode: number; message: string },
  ) {
    const [statusCode, message] = ERRORS[code];
    // An ApiError is an answer, not a fault: nobody reads its stack, and capturing one
    // was the largest single cost of answering an error (a tenth of the CPU of each).
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(override?.message ?? message);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'ApiError';
    this.statusCode = override?.statusCode ?? statusCode;
  }
}

export interface ErrorBody {
  code: number;
  /** The same integer as `code`: clients of the hosted service read either (docs/internals.md, Whatspie compatibility). */
  status: number;
  message: string;
  error?: string;
  errors?: Record<string, string[]>;
}

export function errorBody(error: ApiError): ErrorBody {
  const body: ErrorBody = { code: error.statusCode, status: error.statusCode, message: error.message };
  if (error.detail.error !== undefined) body.error = error.detail.error;
  if (error.detail.errors !== undefined) body.errors = error.detail.errors;
  return body;
}
