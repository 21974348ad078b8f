"use client";
// A form for the two common shapes — a ledger of distinct events, or per-group event-time windows —
// that writes the YAML into the editor (draftFromForm in @sluice/services/drafts/pure); the server
// checks the result like any draft.
import { defaultDraftForm, draftFromForm, type TDraftForm } from "@sluice/services/drafts/pure";
import { useState } from "react";

const list = (s: string) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

export function ShapeForm({
  owner,
  topic,
  onYaml,
}: {
  owner: string | undefined;
  topic: string | undefined;
  onYaml(yaml: string): void;
}) {
  const [form, setForm] = useState<TDraftForm>(() =>
    defaultDraftForm({ ...(owner ? { owner } : {}), ...(topic ? { topic } : {}) }),
  );
  const set = (patch: Partial<TDraftForm>) => setForm((f) => ({ ...f, ...patch }));
  const field = (label: string, value: string, onChange: (v: string) => void) => (
    <label className="form__field">
      <span>{label}</span>
      <input value={value} onChange={(e) => onChange(e.target.value)} aria-label={label} />
    </label>
  );
  return (
    <form
      className="form draft-form"
      data-testid="shape-form"
      onSubmit={(e) => {
        e.preventDefault();
        onYaml(draftFromForm(form));
      }}
    >
      <label className="form__field">
        <span>Shape</span>
        <select
          value={form.shape}
          onChange={(e) => set({ shape: e.target.value as TDraftForm["shape"] })}
          aria-label="Shape"
        >
          <option value="ledger">a ledger: every distinct event once</option>
          <option value="windowed">windowed: measures per group and event-time window</option>
        </select>
      </label>
      {field("Name", form.name, (name) => set({ name }))}
      {field("Owner team", form.owner, (o) => set({ owner: o }))}
      {field("Topic", form.topic, (t) => set({ topic: t }))}
      <label className="form__field">
        <span>Fields (one per line, name: type)</span>
        <textarea
          rows={6}
          value={form.fields.map((f) => `${f.name}: ${f.type}`).join("\n")}
          onChange={(e) =>
            set({
              fields: e.target.value
                .split("\n")
                .map((l) => ({ name: l.split(":")[0]!.trim(), type: (l.split(":")[1] ?? "string").trim() })),
            })
          }
          aria-label="Fields"
        />
      </label>
      {field("Event-time column", form.eventTimeColumn, (c) => set({ eventTimeColumn: c }))}
      {field("Watermark delay", form.watermarkDelay ?? "", (w) => set({ watermarkDelay: w }))}
      {field("Dedupe key (comma-separated)", form.dedupeKey.join(", "), (k) => set({ dedupeKey: list(k) }))}
      {field("Sink table", form.table, (t) => set({ table: t }))}
      {form.shape === "windowed" ? (
        <>
          {field("Tumbling window", form.window ?? "", (w) => set({ window: w }))}
          {field("Group by (comma-separated)", (form.groupBy ?? []).join(", "), (g) =>
            set({ groupBy: list(g) }),
          )}
          <label className="form__field">
            <span>Measures (one per line, name: function)</span>
            <textarea
              rows={3}
              value={(form.measures ?? []).map((m) => `${m.name}: ${m.expr}`).join("\n")}
              onChange={(e) =>
                set({
                  measures: e.target.value.split("\n").map((l) => ({
                    name: l.split(":")[0]!.trim(),
                    expr: l.split(":").slice(1).join(":").trim(),
                  })),
                })
              }
              aria-label="Measures"
            />
          </label>
        </>
      ) : null}
      <button type="submit" className="button">
        Write the YAML
      </button>
    </form>
  );
}
