// The drafts module's browser-safe part (no database, Kafka or server imports): templates, the form.
export { draftFromForm, draftTemplate, defaultDraftForm, ZDraftForm, type TDraftForm } from "./draft-template";
