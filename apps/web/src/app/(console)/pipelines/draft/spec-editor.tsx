"use client";
// The spec editor: CodeMirror 6 with YAML highlighting (@uiw/react-codemirror, @codemirror/lang-yaml),
// the server's validation errors underlined at their line and column (@codemirror/lint), the field's
// docs on hover, and completions — a section's field names, and the contract's fields inside
// expressions. Validation itself is the server's (draft.check), so the editor only shows it. The
// vocabulary and the contract's fields change while the extensions stay the same: they live in the
// editor's own state (a StateField, set by an effect), where completions and hovers read them.
import { autocompletion, type CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import { yaml } from "@codemirror/lang-yaml";
import { lintGutter, setDiagnostics, type Diagnostic } from "@codemirror/lint";
import { StateEffect, StateField } from "@codemirror/state";
import { EditorView, hoverTooltip } from "@codemirror/view";
import CodeMirror from "@uiw/react-codemirror";
import type { TContractField } from "@sluice/services";
import type { TSpecVocabulary } from "@sluice/pipeline-spec";
import { useEffect, useMemo, useRef } from "react";
import { inExpression, keyAt, sectionAt } from "./yaml-path";

export interface TEditorError {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

interface TProps {
  value: string;
  onChange(value: string): void;
  errors: TEditorError[];
  vocabulary: TSpecVocabulary | undefined;
  contractFields: TContractField[];
}

interface TLive {
  vocabulary: TSpecVocabulary | undefined;
  contractFields: TContractField[];
}
const setLive = StateEffect.define<TLive>();
const liveField = StateField.define<TLive>({
  create: () => ({ vocabulary: undefined, contractFields: [] }),
  update: (live, tr) => tr.effects.reduce((v, e) => (e.is(setLive) ? e.value : v), live),
});

/** An error's position in the document: from its column to the end of the word there (or the line). */
function diagnosticsOf(view: EditorView, errors: TEditorError[]): Diagnostic[] {
  const doc = view.state.doc;
  return errors.map((e) => {
    if (!e.line || e.line > doc.lines)
      return {
        from: 0,
        to: Math.min(doc.length, doc.line(1).to),
        severity: "error" as const,
        message: `${e.path || "(spec)"}: ${e.message}`,
      };
    const line = doc.line(e.line);
    const from = Math.min(line.to, line.from + Math.max(0, (e.column ?? 1) - 1));
    const rest = doc.sliceString(from, line.to);
    const word = /^\S+/.exec(rest)?.[0].length ?? 0;
    return {
      from,
      to: word > 0 ? from + word : line.to,
      severity: "error" as const,
      message: `${e.path || "(spec)"}: ${e.message}`,
    };
  });
}

export function SpecEditor({ value, onChange, errors, vocabulary, contractFields }: TProps) {
  const view = useRef<EditorView | null>(null);

  useEffect(() => {
    const v = view.current;
    if (v) v.dispatch(setDiagnostics(v.state, diagnosticsOf(v, errors)));
  }, [errors]);

  useEffect(() => {
    view.current?.dispatch({ effects: setLive.of({ vocabulary, contractFields }) });
  }, [vocabulary, contractFields]);

  const extensions = useMemo(
    () => [
      yaml(),
      // Long lines wrap instead of widening the page (a pasted one-line blob would push everything aside).
      EditorView.lineWrapping,
      lintGutter(),
      liveField,
      autocompletion({ override: [(ctx: CompletionContext) => complete(ctx, ctx.state.field(liveField))] }),
      hoverTooltip((v, pos) => {
        const line = v.state.doc.lineAt(pos);
        const key = keyAt(line.text);
        const lines = v.state.doc.toString().split("\n");
        const section = sectionAt(lines, line.number - 1);
        if (!key || section === undefined) return null;
        const keyFrom = line.from + line.text.indexOf(key);
        if (pos < keyFrom || pos > keyFrom + key.length) return null;
        const doc = v.state.field(liveField).vocabulary?.[section]?.find((k) => k.key === key)?.doc;
        if (!doc) return null;
        return {
          pos: keyFrom,
          end: keyFrom + key.length,
          above: true,
          create: () => {
            const dom = document.createElement("div");
            dom.className = "spec-doc";
            dom.textContent = `${section ? `${section}.` : ""}${key}: ${doc}`;
            return { dom };
          },
        };
      }),
    ],
    [],
  );

  return (
    <div className="spec-editor" data-testid="spec-editor">
      <CodeMirror
        value={value}
        onChange={onChange}
        extensions={extensions}
        height="520px"
        basicSetup={{ lineNumbers: true, foldGutter: true, autocompletion: false }}
        onCreateEditor={(v) => {
          view.current = v;
          v.dispatch(setDiagnostics(v.state, diagnosticsOf(v, errors)));
          v.dispatch({ effects: setLive.of({ vocabulary, contractFields }) });
        }}
        aria-label="Pipeline spec (YAML)"
      />
    </div>
  );
}

function complete(ctx: CompletionContext, live: TLive): CompletionResult | null {
  const line = ctx.state.doc.lineAt(ctx.pos);
  const before = line.text.slice(0, ctx.pos - line.from);
  const word = ctx.matchBefore(/[A-Za-z_][\w-]*/);
  const lines = ctx.state.doc.toString().split("\n");
  const section = sectionAt(lines, line.number - 1, { partial: true });
  if (inExpression(before, section)) {
    if (!word && !ctx.explicit) return null;
    return {
      from: word?.from ?? ctx.pos,
      options: live.contractFields.map((f) => ({
        label: f.name,
        type: "variable",
        detail: f.type,
        info: `contract field ${f.name}: ${f.type}`,
      })),
    };
  }
  // A key: only where the line so far is indentation, an optional "- ", and the word being typed.
  if (!/^\s*(- )?[A-Za-z_]*[\w-]*$/.test(before) || section === undefined) return null;
  if (!word && !ctx.explicit) return null;
  const keys = live.vocabulary?.[section] ?? [];
  return {
    from: word?.from ?? ctx.pos,
    options: keys.map((k) => ({ label: k.key, type: "property", info: k.doc, apply: `${k.key}: ` })),
  };
}
