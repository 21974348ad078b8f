// The drafts module's browser-safe part (no database, Kafka or server imports): templates, the form.
export {
  draftFromForm,
  draftTemplate,
  defaultDraftForm,
  ZDraftForm,
  type TDraftForm,
} from "./draft-template";
export { MAX_DRAFT_CHARS, MAX_SAMPLE_PER_PARTITION, MAX_SAMPLE_RECORDS } from "./draft-limits";
