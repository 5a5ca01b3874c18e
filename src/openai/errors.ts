/** An error with an HTTP status and OpenAI's error body (`{ error: { message, type, param, code } }`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get type(): string {
    return this.status === 401
      ? 'invalid_request_error'
      : this.status === 404
        ? 'not_found_error'
        : this.status >= 500
          ? 'server_error'
          : 'invalid_request_error';
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** A 400 naming the request field. */
export const badRequest = (param: string, message: string) => new ApiError(400, message, param, 'invalid_value');
