/** Why an edit cannot be rendered; the agent fails the job with `code` as its failureCode (not retryable). */
export class EditFailure extends Error {
  readonly code: 'edit-out-of-range' | 'edit-left-nothing';

  constructor(code: 'edit-out-of-range' | 'edit-left-nothing', message: string) {
    super(message);
    this.name = 'EditFailure';
    this.code = code;
  }
}
