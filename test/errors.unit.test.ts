// src/errors.ts: an ApiError carries its catalogue status and message,
// and (being an answer, not a fault) no stack, without changing the stack
// depth other errors get.
import { describe, expect, it } from 'vitest';
import { ApiError, ERRORS, errorBody } from '../src/errors.js';

describe('ApiError', () => {
  it('takes status and message from the catalogue, or from the sandbox override', () => {
    for (const [code, [status, message]] of Object.entries(ERRORS)) {
      const error = new ApiError(code as keyof typeof ERRORS);
      expect({ status: error.statusCode, message: error.message }).toEqual({ status, message });
      expect(errorBody(error)).toEqual({ code: status, status, message });
    }
    const rejected = new ApiError('SANDBOX_REJECTED', {}, { statusCode: 409, message: 'Phone busy' });
    expect(errorBody(rejected)).toEqual({ code: 409, status: 409, message: 'Phone busy' });
  });

  it('captures no stack frames, and leaves other errors their full stack', () => {
    const before = Error.stackTraceLimit;
    const error = new ApiError('DEVICE_NOT_CONNECTED');
    expect(error.stack ?? '').not.toMatch(/\n\s+at /);
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('ordinary').stack).toMatch(/\n\s+at /);
  });
});
