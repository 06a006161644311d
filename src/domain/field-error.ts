/** One invalid field of a request or a limit set: a JSON pointer and what is wrong with it. */
export type FieldError = { path: string; message: string };
