// A typed consumer of the Node package. It is only type-checked (`tsc --noEmit --strict`): it proves
// the published declarations are real types, so a mistake in using an outcome fails to compile.
// Each `@ts-expect-error` line must be an error; if the types degraded to `any`, tsc would report
// the directive as unused.
import {
  validate,
  validateJson,
  validateBytes,
  explain,
  errorCodes,
  flagCodes,
  schemaVersion,
  SCHEMA_VERSION,
} from "../pkg/index.cjs";
import type {
  Asset,
  CriterionReport,
  Decision,
  ErrorCode,
  FlagCode,
  Outcome,
  QuestionReport,
  ReviewFlag,
  Score,
  ValidationError,
} from "../pkg/index.cjs";

const assets: Asset[] = [
  { id: "3f2b8c1e-5a47-4d2e-9b61-0c8e7a5d4f10", kind: "work", pageCount: 4 },
  { id: "9a1d4e7b-2c3f-4b8a-8e5d-6f7a1b2c3d40", kind: "scheme", pageCount: 2 },
];

// @ts-expect-error: an asset's kind is "work" or "scheme"
const wrongKind: Asset = { id: "x", kind: "paper", pageCount: 1 };
// @ts-expect-error: pageCount is required
const noPages: Asset = { id: "x", kind: "work" };

/** Every error path and code of an invalid outcome, or the score of a valid one. */
export function summarise(outcome: Outcome): string {
  if (outcome.valid) {
    const score: Score = outcome.score;
    const version: "service-marking-import-v1" = outcome.schemaVersion;
    const checked: boolean = outcome.assetsChecked;
    // @ts-expect-error: a valid outcome has no errors
    outcome.errors;
    return `${version} ${checked} ${outcome.status} ${score.awarded}..${score.possible}/${score.max}`;
  }
  // Narrowed to the invalid form.
  const errors: ValidationError[] = outcome.errors;
  const truncated: boolean = outcome.truncated;
  // @ts-expect-error: an invalid outcome has no score
  outcome.score;
  return errors.map((e) => `${e.path} ${e.code}: ${e.message}`).join("\n") + (truncated ? "\n…" : "");
}

export function criteria(question: QuestionReport): string[] {
  return question.criteria.map((c: CriterionReport) => {
    const submitted: Decision = c.submitted;
    const effective: Decision = c.effective;
    const flags: FlagCode[] = c.flags;
    return `${c.id} ${c.code} ${submitted}→${effective} [${flags.join(",")}]`;
  });
}

export function flagsOf(question: QuestionReport): ReviewFlag[] {
  // criterionId is optional: question-level flags have none.
  return question.reviewFlags.filter((f) => f.criterionId === undefined || f.criterionId.length > 0);
}

export function isDependencyProblem(code: ErrorCode): boolean {
  switch (code) {
    case "unknown_dependency":
    case "self_dependency":
    case "cross_question_dependency":
    case "dependency_cycle":
      return true;
    // @ts-expect-error: not an error code
    case "dependency_loop":
      return true;
    default:
      return false;
  }
}

const text = '{"schemaVersion":"service-marking-import-v1"}';
const outcome: Outcome = validate(text, assets);
const withoutAssets: Outcome = validate(text);
const withNull: Outcome = validate(text, null);
const json: string = validateJson(text, assets);
const fromBytes: Outcome = validateBytes(new TextEncoder().encode(text));
const report: string = explain(text);
const version: "service-marking-import-v1" = SCHEMA_VERSION;
const sameVersion: "service-marking-import-v1" = schemaVersion();
const codes: ErrorCode[] = errorCodes().map((c) => c.code);
const flagMeanings: string[] = flagCodes().map((f) => f.meaning);

// @ts-expect-error: the document is a string
validate(42);
// @ts-expect-error: assets are Asset objects
validate(text, [{ id: "x" }]);
// @ts-expect-error: validateBytes takes a Uint8Array
validateBytes(text);
// @ts-expect-error: validate returns an Outcome, not a string
const notText: string = validate(text);

export const used = [wrongKind, noPages, outcome, withoutAssets, withNull, json, fromBytes, report, version, sameVersion, codes, flagMeanings, notText];
