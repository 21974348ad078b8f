// One error shape for every problem found in a spec: a dotted path to the offending field
// (`expectations[1].expr`) and a message that names the value and the fix. All problems are collected,
// never only the first, so a user fixes a spec in one round trip.

export type TPathSegment = string | number;

/** A problem found in a spec. `line`/`column` (1-based) are set when the spec came from text. */
export interface TSpecError {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

/** Internal form: the path as segments, so it can be located in the YAML document before formatting. */
export interface TSpecIssue {
  path: TPathSegment[];
  message: string;
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** ["expectations", 1, "expr"] → "expectations[1].expr"; odd keys are quoted: headers["X-Team"]. */
export function formatPath(path: readonly TPathSegment[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** Thrown by APIs that require a valid spec (compileSpec, parseSpecOrThrow) when given an invalid one. */
export class SpecValidationError extends Error {
  override readonly name = "SpecValidationError";
  constructor(readonly errors: TSpecError[]) {
    super(`invalid pipeline spec:\n${formatSpecErrors(errors)}`);
  }
}

/** One line per error, `file:line:column path: message`, for the CLI and logs. */
export function formatSpecErrors(errors: readonly TSpecError[], fileName?: string): string {
  return errors
    .map((e) => {
      const where = [fileName, e.line, e.line === undefined ? undefined : e.column].filter(
        (x) => x !== undefined,
      );
      const prefix = where.length > 0 ? `${where.join(":")} ` : "";
      return `${prefix}${e.path === "" ? "(spec)" : e.path}: ${e.message}`;
    })
    .join("\n");
}

export function issue(path: TPathSegment[], message: string): TSpecIssue {
  return { path, message };
}
