"use client";
// Adding a rule that watches one output of a pipeline with several outputs (alert.createRule): the
// kinds judged per output, the outputs its serving version declares, and a threshold (empty: the
// kind's default). The server checks the team and refuses an output the pipeline does not declare;
// its message shows here as it is.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { OUTPUT_RULE_KINDS, RULE_KIND_INFO, type TRuleKind } from "@sluice/services/alerts/pure";
import { useState } from "react";
import { useTRPC } from "@/trpc/react";
import { ThresholdInput } from "./threshold-input";

export function OutputRuleForm({ pipeline, outputs }: { pipeline: string; outputs: string[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [kind, setKind] = useState<TRuleKind>("late_rate");
  const [output, setOutput] = useState(outputs[0] ?? "");
  const [threshold, setThreshold] = useState("");
  const add = useMutation(
    trpc.alert.createRule.mutationOptions({
      onSuccess: () => setThreshold(""),
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.alert.pathKey() }),
    }),
  );
  return (
    <form
      className="form form--inline small"
      data-testid="output-rule-form"
      onSubmit={(e) => {
        e.preventDefault();
        add.mutate({
          pipeline,
          kind: kind as never,
          output,
          ...(threshold.trim() === "" ? {} : { threshold: Number(threshold) }),
        });
      }}
    >
      <span className="strong">Add a rule for one output:</span>{" "}
      <label>
        kind{" "}
        <select value={kind} onChange={(e) => setKind(e.target.value as TRuleKind)} aria-label="rule kind">
          {OUTPUT_RULE_KINDS.map((k) => (
            <option key={k} value={k}>
              {RULE_KIND_INFO[k].title}
            </option>
          ))}
        </select>
      </label>{" "}
      <label>
        output{" "}
        <select value={output} onChange={(e) => setOutput(e.target.value)} aria-label="rule output">
          {outputs.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </label>{" "}
      <label>
        threshold{" "}
        <ThresholdInput
          kind={kind}
          value={threshold}
          onChange={setThreshold}
          label="rule threshold"
          placeholder={String(RULE_KIND_INFO[kind].defaults.threshold ?? "spec target")}
        />
      </label>{" "}
      <button type="submit" className="button button--small" disabled={add.isPending || output === ""}>
        Add rule
      </button>
      {add.error ? (
        <div className="form__error" role="alert" data-testid="output-rule-error">
          {add.error.message}
        </div>
      ) : null}
      {add.isSuccess ? <div className="muted">added: it is evaluated from the next tick</div> : null}
    </form>
  );
}
